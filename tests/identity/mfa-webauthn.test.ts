// WebAuthn second factors through supabase-js's auth.mfa (factorType 'webauthn') and a software
// authenticator: enrolment, the 'create' challenge and verification that registers the
// credential and raises the session to aal2 (amr mfa/webauthn), later 'request' challenges signed
// by that authenticator only, and the refusals: replayed or expired challenges, another origin,
// a counter going back, another authenticator, malformed answers, and unenrolment back to aal1.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { decodeJwt } from 'jose';
import type { SupabaseClient } from '@supabase/supabase-js';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { SoftwareAuthenticator } from '../support/webauthn-authenticator.js';

const ORIGIN = 'https://app.example.com';
const RP_ID = 'app.example.com';
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ APP_URL: ORIGIN, RATE_LIMIT_MFA_FAILURES: '50' });
});
afterAll(async () => {
  await server?.close();
});

let counter = 0;
async function signedIn() {
  const supabase = server.client();
  const email = `webauthn${++counter}-${Date.now()}@example.com`;
  const { data, error } = await supabase.auth.signUp({ email, password: 'correct horse battery' });
  expect(error).toBeNull();
  return { supabase, userId: data.user!.id };
}

const token = async (supabase: SupabaseClient) =>
  (await supabase.auth.getSession()).data.session!.access_token;

/** POST /factors/{id}/challenge and /verify as auth-js sends them, with the session's token. */
async function challenge(supabase: SupabaseClient, factorId: string) {
  const res = await call(server, 'POST', `/auth/v1/factors/${factorId}/challenge`, {
    headers: { authorization: `Bearer ${await token(supabase)}` },
    body: { webauthn: { rpId: RP_ID, rpOrigins: [ORIGIN] } },
  });
  return res;
}
async function verify(supabase: SupabaseClient, factorId: string, body: unknown) {
  return call(server, 'POST', `/auth/v1/factors/${factorId}/verify`, {
    headers: { authorization: `Bearer ${await token(supabase)}` },
    body,
  });
}

/** A user whose WebAuthn factor is verified; the client's session is at aal2. */
async function withFactor() {
  const user = await signedIn();
  const enrolled = await user.supabase.auth.mfa.enroll({ factorType: 'webauthn', friendlyName: 'Key' });
  expect(enrolled.error).toBeNull();
  const factorId = enrolled.data!.id;
  const authenticator = new SoftwareAuthenticator(ORIGIN, RP_ID);
  const created = await challenge(user.supabase, factorId);
  expect(created.status).toBe(200);
  const { webauthn, id } = created.body as {
    id: string;
    webauthn: { type: string; credential_options: { publicKey: never } };
  };
  const res = await verify(user.supabase, factorId, {
    challenge_id: id,
    webauthn: {
      type: 'create',
      rpId: RP_ID,
      rpOrigins: [ORIGIN],
      credential_response: authenticator.create(webauthn.credential_options.publicKey),
    },
  });
  expect(res.status).toBe(200);
  const session = res.body as { access_token: string; refresh_token: string };
  await user.supabase.auth.setSession(session);
  return { ...user, factorId, authenticator };
}

test('enrolment makes an unverified webauthn factor; its challenge asks for a credential to be created', async () => {
  const { supabase } = await signedIn();
  const enrolled = await supabase.auth.mfa.enroll({ factorType: 'webauthn', friendlyName: '' });
  expect(enrolled.error).toBeNull();
  expect(enrolled.data).toMatchObject({ type: 'webauthn', friendly_name: '' });
  const res = await challenge(supabase, enrolled.data!.id);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    type: 'webauthn',
    expires_at: expect.any(Number),
    webauthn: {
      type: 'create',
      credential_options: { publicKey: { rp: { id: RP_ID }, challenge: expect.any(String) } },
    },
  });
  const factors = await supabase.auth.mfa.listFactors();
  expect(factors.data!.all).toEqual([
    expect.objectContaining({ factor_type: 'webauthn', status: 'unverified' }),
  ]);
});

test('the first verification registers the authenticator and raises the session to aal2 (amr mfa/webauthn)', async () => {
  const { supabase, factorId } = await withFactor();
  const claims = decodeJwt(await token(supabase)) as { aal: string; amr: { method: string }[] };
  expect(claims.aal).toBe('aal2');
  expect(claims.amr[0]!.method).toBe('mfa/webauthn');
  const factors = await supabase.auth.mfa.listFactors();
  expect(factors.data!.webauthn).toEqual([expect.objectContaining({ id: factorId, status: 'verified' })]);
  const stored = await server.pool.query(
    'select web_authn_credential_id is not null as has_key, web_authn_sign_count from auth.mfa_factors where id = $1',
    [factorId],
  );
  expect(stored.rows[0]).toEqual({ has_key: true, web_authn_sign_count: '0' });
  // In the security log as every factor's verifications are.
  const attempts = await server.pool.query<{ result: string }>(
    `select details->>'result' as result from public.audit_events
     where action = 'verification_attempted' and target_id = $1 and details->>'factor_type' = 'webauthn'`,
    [factorId],
  );
  expect(attempts.rows.map((r) => r.result)).toEqual(['verified']);
});

test('a later sign-in: the request challenge allows only this factor’s credential; its assertion raises a new session', async () => {
  const { supabase, factorId, authenticator } = await withFactor();
  const again = server.client();
  const email = (await supabase.auth.getUser()).data.user!.email!;
  await again.auth.signInWithPassword({ email, password: 'correct horse battery' });
  const res = await challenge(again, factorId);
  const body = res.body as {
    id: string;
    webauthn: {
      type: string;
      credential_options: { publicKey: { challenge: string; allowCredentials: { id: string }[] } };
    };
  };
  expect(body.webauthn.type).toBe('request');
  expect(body.webauthn.credential_options.publicKey.allowCredentials.map((c) => c.id)).toEqual([
    authenticator.id,
  ]);
  const ok = await verify(again, factorId, {
    challenge_id: body.id,
    webauthn: {
      type: 'request',
      credential_response: authenticator.get(body.webauthn.credential_options.publicKey),
    },
  });
  expect(ok.status).toBe(200);
  expect((decodeJwt((ok.body as { access_token: string }).access_token) as { aal: string }).aal).toBe('aal2');
  // Replayed: the challenge was answered.
  const replay = await verify(again, factorId, {
    challenge_id: body.id,
    webauthn: {
      type: 'request',
      credential_response: authenticator.get(body.webauthn.credential_options.publicKey),
    },
  });
  expect([replay.status, replay.body.error_code]).toEqual([422, 'mfa_factor_not_found']);
});

test('another origin, a counter going back, another authenticator, or an expired challenge leave the session at aal1', async () => {
  const { supabase, factorId, authenticator } = await withFactor();
  const email = (await supabase.auth.getUser()).data.user!.email!;
  const again = server.client();
  await again.auth.signInWithPassword({ email, password: 'correct horse battery' });
  const attempt = async (answer: (options: never) => unknown) => {
    const res = await challenge(again, factorId);
    const body = res.body as { id: string; webauthn: { credential_options: { publicKey: never } } };
    return verify(again, factorId, {
      challenge_id: body.id,
      webauthn: { type: 'request', credential_response: answer(body.webauthn.credential_options.publicKey) },
    });
  };
  const wrongOrigin = await attempt((o) => authenticator.get(o, { origin: 'https://evil.example.net' }));
  expect([wrongOrigin.status, wrongOrigin.body.error_code]).toEqual([400, 'webauthn_verification_failed']);
  expect((await attempt((o) => authenticator.get(o, { signCount: 7 }))).status).toBe(200);
  await again.auth.signInWithPassword({ email, password: 'correct horse battery' });
  const back = await attempt((o) => authenticator.get(o, { signCount: 7 }));
  expect([back.status, back.body.error_code]).toEqual([400, 'webauthn_verification_failed']);
  const stranger = new SoftwareAuthenticator(ORIGIN, RP_ID);
  const other = await attempt((o) => stranger.get(o, { userHandle: 'x' }));
  expect([other.status, other.body.error_code]).toEqual([400, 'webauthn_verification_failed']);
  const res = await challenge(again, factorId);
  await server.pool.query(
    `update auth.mfa_challenges set created_at = now() - interval '1 hour' where id = $1`,
    [res.body.id],
  );
  const late = await verify(again, factorId, {
    challenge_id: res.body.id,
    webauthn: {
      type: 'request',
      credential_response: authenticator.get(
        (res.body as never as { webauthn: { credential_options: { publicKey: never } } }).webauthn
          .credential_options.publicKey,
      ),
    },
  });
  expect([late.status, late.body.error_code]).toEqual([422, 'mfa_challenge_expired']);
  expect((decodeJwt(await token(again)) as { aal: string }).aal).toBe('aal1');
});

test('malformed answers are refused with GoTrue’s words', async () => {
  const { supabase } = await signedIn();
  const enrolled = await supabase.auth.mfa.enroll({ factorType: 'webauthn' });
  const factorId = enrolled.data!.id;
  const res = await challenge(supabase, factorId);
  const challengeId = res.body.id as string;
  const cases: [unknown, string][] = [
    [{ challenge_id: challengeId }, 'WebAuthn config required'],
    [
      { challenge_id: challengeId, webauthn: { type: 'sign', credential_response: {} } },
      'WebAuthn type must be create or request',
    ],
    [{ challenge_id: challengeId, webauthn: { type: 'create' } }, 'credential_response required'],
  ];
  for (const [body, message] of cases) {
    const answer = await verify(supabase, factorId, body);
    expect([answer.status, answer.body.msg]).toEqual([400, message]);
  }
  const garbage = await verify(supabase, factorId, {
    challenge_id: challengeId,
    webauthn: { type: 'create', credential_response: { id: 1 } },
  });
  expect([garbage.status, garbage.body.msg]).toEqual([400, 'Invalid credential_response']);
  const factors = await supabase.auth.mfa.listFactors();
  expect(factors.data!.all[0]!.status).toBe('unverified');
});

test('unenrolling the factor from aal2 brings the sessions it raised back to aal1', async () => {
  const { supabase, factorId, userId } = await withFactor();
  const { error } = await supabase.auth.mfa.unenroll({ factorId });
  expect(error).toBeNull();
  const sessions = await server.pool.query('select aal, amr from auth.sessions where user_id = $1', [userId]);
  for (const s of sessions.rows) {
    expect(s.aal).toBe('aal1');
    expect((s.amr as { method: string }[]).map((e) => e.method)).not.toContain('mfa/webauthn');
  }
});

test('MFA_WEBAUTHN_ENROLL_ENABLED=false refuses the enrolment as GoTrue does', async () => {
  const off = await startTestServer({ APP_URL: ORIGIN, MFA_WEBAUTHN_ENROLL_ENABLED: 'false' });
  try {
    const supabase = off.client();
    await supabase.auth.signUp({ email: `off-${Date.now()}@example.com`, password: 'correct horse battery' });
    const res = await supabase.auth.mfa.enroll({ factorType: 'webauthn' });
    expect(res.error?.code).toBe('mfa_webauthn_enroll_not_enabled');
  } finally {
    await off.close();
  }
});
