// Passkeys through the real supabase-js client (auth.passkey.* with experimental.passkey) and a
// software authenticator: registration and sign-in ceremonies (a session with amr passkey),
// listing, renaming and deleting (own and admin), and every refusal with GoTrue's status and
// code: a replayed or expired challenge, another origin or site, a counter going back, another
// account's credential or handle, malformed bodies, the management rules and the switch.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { decodeJwt } from 'jose';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import ws from 'ws';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { SoftwareAuthenticator } from '../support/webauthn-authenticator.js';

const ORIGIN = 'https://app.example.com';
const RP_ID = 'app.example.com';
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ APP_URL: ORIGIN, WEBAUTHN_CHALLENGE_EXPIRY: '30' });
});
afterAll(async () => {
  await server?.close();
});

const passkeyClient = (target: TestServer): SupabaseClient =>
  createClient(target.url, target.config.projectApiKey, {
    auth: {
      persistSession: false,
      autoRefreshToken: false,
      detectSessionInUrl: false,
      experimental: { passkey: true },
    },
    realtime: { transport: ws as unknown as typeof WebSocket },
  });
const client = () => passkeyClient(server);

let counter = 0;
async function signedIn() {
  const supabase = client();
  const email = `passkey${++counter}-${Date.now()}@example.com`;
  const { data, error } = await supabase.auth.signUp({ email, password: 'correct horse battery' });
  expect(error).toBeNull();
  const token = data.session!.access_token;
  return { supabase, email, userId: data.user!.id, token };
}

/** A signed-in user with a registered passkey on a fresh authenticator. */
async function withPasskey() {
  const user = await signedIn();
  const authenticator = new SoftwareAuthenticator(ORIGIN, RP_ID);
  const options = await user.supabase.auth.passkey.startRegistration();
  expect(options.error).toBeNull();
  const created = await user.supabase.auth.passkey.verifyRegistration({
    challengeId: options.data!.challenge_id,
    credential: authenticator.create(options.data!.options) as never,
  });
  expect(created.error).toBeNull();
  return { ...user, authenticator, passkeyId: created.data!.id };
}

async function signInOptions() {
  const res = await call(server, 'POST', '/auth/v1/passkeys/authentication/options', { body: {} });
  expect(res.status).toBe(200);
  return res.body as { challenge_id: string; options: { challenge: string; rpId: string } };
}

const verifySignIn = (challengeId: string, credential: unknown) =>
  call(server, 'POST', '/auth/v1/passkeys/authentication/verify', {
    body: { challenge_id: challengeId, credential },
  });

describe('registration', () => {
  test('options name this site, the user and ES256, ask for a discoverable credential, and exclude the ones registered', async () => {
    const { supabase, userId, authenticator } = await withPasskey();
    const { data, error } = await supabase.auth.passkey.startRegistration();
    expect(error).toBeNull();
    expect(data!.challenge_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(data!.expires_at).toBeGreaterThan(Date.now() / 1000);
    expect(data!.expires_at).toBeLessThanOrEqual(Date.now() / 1000 + 31);
    expect(data!.options.rp.id).toBe(RP_ID);
    expect(Buffer.from(data!.options.user.id, 'base64url').toString()).toBe(userId);
    expect(data!.options.pubKeyCredParams).toContainEqual({ alg: -7, type: 'public-key' });
    expect(data!.options.authenticatorSelection?.residentKey).toBe('required');
    expect(data!.options.attestation).toBe('none');
    expect(data!.options.excludeCredentials?.map((c) => c.id)).toEqual([authenticator.id]);
  });

  test('a verified registration is stored with its key, counter, transports and name, and listed', async () => {
    const { supabase, userId, passkeyId, authenticator } = await withPasskey();
    const stored = await server.pool.query(
      'select user_id, credential_id, sign_count, transports, friendly_name, aaguid from auth.webauthn_credentials where id = $1',
      [passkeyId],
    );
    expect(stored.rows[0]).toMatchObject({
      user_id: userId,
      sign_count: '0',
      transports: ['internal', 'hybrid'],
      friendly_name: 'Passkey',
      aaguid: null,
    });
    expect((stored.rows[0].credential_id as Buffer).equals(authenticator.credentialId)).toBe(true);
    const listed = await supabase.auth.passkey.list();
    expect(listed.error).toBeNull();
    expect(listed.data).toEqual([
      { id: passkeyId, friendly_name: 'Passkey', created_at: expect.any(String) },
    ]);
  });

  test('the same authenticator cannot be registered twice, even by another account', async () => {
    const { authenticator } = await withPasskey();
    const other = await signedIn();
    const options = await other.supabase.auth.passkey.startRegistration();
    const again = await call(server, 'POST', '/auth/v1/passkeys/registration/verify', {
      headers: { authorization: `Bearer ${other.token}` },
      body: {
        challenge_id: options.data!.challenge_id,
        credential: authenticator.create(options.data!.options),
      },
    });
    expect(again.status).toBe(422);
    expect(again.body.error_code).toBe('webauthn_credential_exists');
  });

  test("a registration challenge is its user's own and used once", async () => {
    const owner = await signedIn();
    const other = await signedIn();
    const authenticator = new SoftwareAuthenticator(ORIGIN, RP_ID);
    const options = await owner.supabase.auth.passkey.startRegistration();
    const credential = authenticator.create(options.data!.options);
    const stolen = await call(server, 'POST', '/auth/v1/passkeys/registration/verify', {
      headers: { authorization: `Bearer ${other.token}` },
      body: { challenge_id: options.data!.challenge_id, credential },
    });
    expect(stolen.status).toBe(400);
    expect(stolen.body.error_code).toBe('webauthn_challenge_not_found');
    const first = await owner.supabase.auth.passkey.verifyRegistration({
      challengeId: options.data!.challenge_id,
      credential: credential as never,
    });
    expect(first.error).toBeNull();
    const replay = await owner.supabase.auth.passkey.verifyRegistration({
      challengeId: options.data!.challenge_id,
      credential: credential as never,
    });
    expect(replay.error?.code).toBe('webauthn_challenge_not_found');
    expect((replay.error as { status?: number } | null)?.status).toBe(400);
  });

  test('another origin, another site or a creation made for another challenge is refused and stores nothing', async () => {
    const user = await signedIn();
    const cases = [
      { origin: 'https://evil.example.net' },
      { rpId: 'evil.example.net' },
      { type: 'webauthn.get' },
    ];
    for (const overrides of cases) {
      const options = await user.supabase.auth.passkey.startRegistration();
      const credential = new SoftwareAuthenticator(ORIGIN, RP_ID).create(options.data!.options, overrides);
      const res = await user.supabase.auth.passkey.verifyRegistration({
        challengeId: options.data!.challenge_id,
        credential: credential as never,
      });
      expect(res.error?.code, JSON.stringify(overrides)).toBe('webauthn_verification_failed');
      expect((res.error as { status?: number } | null)?.status).toBe(400);
    }
    const other = await user.supabase.auth.passkey.startRegistration();
    const mine = await user.supabase.auth.passkey.startRegistration();
    const answer = new SoftwareAuthenticator(ORIGIN, RP_ID).create(other.data!.options);
    const crossed = await user.supabase.auth.passkey.verifyRegistration({
      challengeId: mine.data!.challenge_id,
      credential: answer as never,
    });
    expect(crossed.error?.code).toBe('webauthn_verification_failed');
    const count = await server.pool.query(
      'select count(*)::int as n from auth.webauthn_credentials where user_id = $1',
      [user.userId],
    );
    expect(count.rows[0].n).toBe(0);
  });

  test('malformed bodies get validation errors and change nothing', async () => {
    const user = await signedIn();
    const auth = { authorization: `Bearer ${user.token}` };
    const path = '/auth/v1/passkeys/registration/verify';
    const options = await user.supabase.auth.passkey.startRegistration();
    const challengeId = options.data!.challenge_id;
    const missing = await call(server, 'POST', path, { headers: auth, body: { credential: {} } });
    expect([missing.status, missing.body.error_code]).toEqual([400, 'validation_failed']);
    const noCredential = await call(server, 'POST', path, {
      headers: auth,
      body: { challenge_id: challengeId },
    });
    expect([noCredential.status, noCredential.body.msg]).toEqual([400, 'credential is required']);
    const notUuid = await call(server, 'POST', path, {
      headers: auth,
      body: { challenge_id: 'x', credential: {} },
    });
    expect([notUuid.status, notUuid.body.msg]).toEqual([400, 'challenge_id must be a valid UUID']);
    const badJson = await call(server, 'POST', path, { headers: auth, rawBody: '{"challenge_id":' });
    expect([badJson.status, badJson.body.error_code]).toEqual([400, 'bad_json']);
    const garbage = await call(server, 'POST', path, {
      headers: auth,
      body: { challenge_id: challengeId, credential: { id: 'AAAA', response: 'nope' } },
    });
    expect([garbage.status, garbage.body.error_code, garbage.body.msg]).toEqual([
      400,
      'webauthn_verification_failed',
      'Invalid credential response',
    ]);
    const count = await server.pool.query(
      'select count(*)::int as n from auth.webauthn_credentials where user_id = $1',
      [user.userId],
    );
    expect(count.rows[0].n).toBe(0);
  });

  test('no session, an anonymous user, and the per-user limit are refused', async () => {
    const none = await call(server, 'POST', '/auth/v1/passkeys/registration/options', { body: {} });
    expect([none.status, none.body.error_code]).toEqual([401, 'no_authorization']);
    const limited = await startTestServer({ APP_URL: ORIGIN, PASSKEY_MAX_PASSKEYS_PER_USER: '1' });
    try {
      const supabase = passkeyClient(limited);
      await supabase.auth.signUp({
        email: `limit-${Date.now()}@example.com`,
        password: 'correct horse battery',
      });
      const first = await supabase.auth.passkey.startRegistration();
      const ok = await supabase.auth.passkey.verifyRegistration({
        challengeId: first.data!.challenge_id,
        credential: new SoftwareAuthenticator(ORIGIN, RP_ID).create(first.data!.options) as never,
      });
      expect(ok.error).toBeNull();
      const second = await supabase.auth.passkey.startRegistration();
      expect(second.error?.status).toBe(422);
      expect(second.error?.code).toBe('too_many_passkeys');
    } finally {
      await limited.close();
    }
  });
});

describe('sign-in', () => {
  test('a passkey signs its owner in: a session with amr passkey at aal1, recorded on the passkey', async () => {
    const { userId, passkeyId, authenticator, supabase: owner } = await withPasskey();
    const supabase = client();
    const options = await supabase.auth.passkey.startAuthentication();
    expect(options.error).toBeNull();
    expect(options.data!.options.rpId).toBe(RP_ID);
    expect(options.data!.options.allowCredentials ?? []).toEqual([]);
    const signedIn = await supabase.auth.passkey.verifyAuthentication({
      challengeId: options.data!.challenge_id,
      credential: authenticator.get(options.data!.options) as never,
    });
    expect(signedIn.error).toBeNull();
    expect(signedIn.data!.user!.id).toBe(userId);
    const claims = decodeJwt(signedIn.data!.session!.access_token) as {
      aal: string;
      amr: { method: string }[];
    };
    expect(claims.aal).toBe('aal1');
    expect(claims.amr.map((e) => e.method)).toEqual(['passkey']);
    const user = await supabase.auth.getUser();
    expect(user.data.user?.id).toBe(userId);
    const listed = await owner.auth.passkey.list();
    expect(listed.data![0]).toMatchObject({ id: passkeyId, last_used_at: expect.any(String) });
    const stored = await server.pool.query('select sign_count from auth.webauthn_credentials where id = $1', [
      passkeyId,
    ]);
    expect(stored.rows[0].sign_count).toBe('1');
  });

  test('a replayed challenge is refused after one sign-in', async () => {
    const { authenticator } = await withPasskey();
    const options = await signInOptions();
    const assertion = authenticator.get(options.options);
    expect((await verifySignIn(options.challenge_id, assertion)).status).toBe(200);
    const again = await verifySignIn(options.challenge_id, assertion);
    expect([again.status, again.body.error_code]).toEqual([400, 'webauthn_challenge_not_found']);
  });

  test('a failed attempt uses the challenge up too', async () => {
    const { authenticator } = await withPasskey();
    const options = await signInOptions();
    const wrong = await verifySignIn(
      options.challenge_id,
      authenticator.get(options.options, { origin: 'https://x.example' }),
    );
    expect(wrong.body.error_code).toBe('webauthn_verification_failed');
    const right = await verifySignIn(options.challenge_id, authenticator.get(options.options));
    expect([right.status, right.body.error_code]).toEqual([400, 'webauthn_challenge_not_found']);
  });

  test('an expired challenge is refused as expired', async () => {
    const { authenticator } = await withPasskey();
    const options = await signInOptions();
    await server.pool.query(
      `update auth.webauthn_challenges set expires_at = now() - interval '1 second' where id = $1`,
      [options.challenge_id],
    );
    const late = await verifySignIn(options.challenge_id, authenticator.get(options.options));
    expect([late.status, late.body.error_code, late.body.msg]).toEqual([
      400,
      'webauthn_challenge_expired',
      'Challenge has expired',
    ]);
  });

  test('another origin, another RP id, a wrong signature or a ceremony of the wrong type are refused', async () => {
    const { authenticator } = await withPasskey();
    for (const overrides of [
      { origin: 'https://evil.example.net' },
      { rpId: 'example.com' },
      { type: 'webauthn.create' },
    ]) {
      const options = await signInOptions();
      const res = await verifySignIn(options.challenge_id, authenticator.get(options.options, overrides));
      expect([res.status, res.body.error_code], JSON.stringify(overrides)).toEqual([
        400,
        'webauthn_verification_failed',
      ]);
    }
    const options = await signInOptions();
    const assertion = authenticator.get(options.options);
    const tampered = {
      ...assertion,
      response: { ...assertion.response, signature: Buffer.alloc(70, 1).toString('base64url') },
    };
    const res = await verifySignIn(options.challenge_id, tampered);
    expect([res.status, res.body.error_code]).toEqual([400, 'webauthn_verification_failed']);
  });

  test('a counter that does not move forward (a cloned authenticator) is refused and the stored count stays', async () => {
    const { authenticator, passkeyId } = await withPasskey();
    const attempt = async (signCount: number) => {
      const options = await signInOptions();
      return verifySignIn(options.challenge_id, authenticator.get(options.options, { signCount }));
    };
    expect((await attempt(5)).status).toBe(200);
    for (const signCount of [5, 3, 0]) {
      const res = await attempt(signCount);
      expect([res.status, res.body.error_code], String(signCount)).toEqual([
        400,
        'webauthn_verification_failed',
      ]);
    }
    const stored = await server.pool.query('select sign_count from auth.webauthn_credentials where id = $1', [
      passkeyId,
    ]);
    expect(stored.rows[0].sign_count).toBe('5');
    expect((await attempt(6)).status).toBe(200);
  });

  test("an unregistered authenticator, or one presenting another account's user handle, signs nobody in", async () => {
    const victim = await withPasskey();
    const attacker = await withPasskey();
    let options = await signInOptions();
    const stranger = new SoftwareAuthenticator(ORIGIN, RP_ID);
    const unregistered = stranger.get(options.options, {
      userHandle: Buffer.from(victim.userId).toString('base64url'),
    });
    let res = await verifySignIn(options.challenge_id, unregistered);
    expect([res.status, res.body.error_code]).toEqual([400, 'webauthn_verification_failed']);
    options = await signInOptions();
    const crossed = attacker.authenticator.get(options.options, {
      userHandle: Buffer.from(victim.userId).toString('base64url'),
    });
    res = await verifySignIn(options.challenge_id, crossed);
    expect([res.status, res.body.error_code]).toEqual([400, 'webauthn_verification_failed']);
    const sessions = await server.pool.query(
      `select count(*)::int as n from auth.sessions where user_id = $1 and amr->0->>'method' = 'passkey'`,
      [victim.userId],
    );
    expect(sessions.rows[0].n).toBe(0);
  });

  test('malformed sign-in bodies are refused before any challenge is used', async () => {
    const { authenticator } = await withPasskey();
    const options = await signInOptions();
    const path = '/auth/v1/passkeys/authentication/verify';
    const noId = await call(server, 'POST', path, { body: { credential: {} } });
    expect([noId.status, noId.body.error_code]).toEqual([400, 'validation_failed']);
    const noCred = await call(server, 'POST', path, { body: { challenge_id: options.challenge_id } });
    expect([noCred.status, noCred.body.msg]).toEqual([400, 'credential is required']);
    const unknown = await verifySignIn(
      '00000000-0000-0000-0000-000000000000',
      authenticator.get(options.options),
    );
    expect([unknown.status, unknown.body.error_code]).toEqual([400, 'webauthn_challenge_not_found']);
    const wrongShape = await verifySignIn(options.challenge_id, { id: authenticator.id, type: 'public-key' });
    expect([wrongShape.status, wrongShape.body.msg]).toEqual([400, 'Invalid credential response']);
  });

  test('a banned owner is refused with 403', async () => {
    const { authenticator, userId } = await withPasskey();
    await server.adminClient().auth.admin.updateUserById(userId, { ban_duration: '1h' });
    const options = await signInOptions();
    const res = await verifySignIn(options.challenge_id, authenticator.get(options.options));
    expect([res.status, res.body.error_code]).toEqual([403, 'user_banned']);
  });
});

describe('management', () => {
  test('rename: 1 to 120 characters, own passkeys only', async () => {
    const { supabase, passkeyId } = await withPasskey();
    const other = await withPasskey();
    const renamed = await supabase.auth.passkey.update({ passkeyId, friendlyName: 'Work laptop' });
    expect(renamed.error).toBeNull();
    expect(renamed.data).toMatchObject({ id: passkeyId, friendly_name: 'Work laptop' });
    const empty = await supabase.auth.passkey.update({ passkeyId, friendlyName: '' });
    expect([empty.error?.status, empty.error?.message]).toEqual([400, 'friendly_name is required']);
    const long = await supabase.auth.passkey.update({ passkeyId, friendlyName: 'x'.repeat(121) });
    expect(long.error?.status).toBe(400);
    const theirs = await supabase.auth.passkey.update({
      passkeyId: other.passkeyId,
      friendlyName: 'mine now',
    });
    expect(theirs.error?.status).toBe(404);
    const listed = await other.supabase.auth.passkey.list();
    expect(listed.data![0]!.friendly_name).toBe('Passkey');
  });

  test("delete: the passkey stops signing in; another user's passkey is not found", async () => {
    const { supabase, passkeyId, authenticator } = await withPasskey();
    const other = await withPasskey();
    const theirs = await supabase.auth.passkey.delete({ passkeyId: other.passkeyId });
    expect(theirs.error?.status).toBe(404);
    expect((await other.supabase.auth.passkey.list()).data).toHaveLength(1);
    const gone = await supabase.auth.passkey.delete({ passkeyId });
    expect(gone.error).toBeNull();
    expect((await supabase.auth.passkey.list()).data).toEqual([]);
    const options = await signInOptions();
    const res = await verifySignIn(options.challenge_id, authenticator.get(options.options));
    expect(res.body.error_code).toBe('webauthn_verification_failed');
  });

  test('with a verified second factor, adding or deleting a passkey needs an aal2 session', async () => {
    const { supabase, passkeyId, userId } = await withPasskey();
    await server.pool.query(
      `insert into auth.mfa_factors (user_id, factor_type, status, secret) values ($1, 'totp', 'verified', 'x')`,
      [userId],
    );
    const start = await supabase.auth.passkey.startRegistration();
    expect([start.error?.status, start.error?.code]).toEqual([403, 'insufficient_aal']);
    const del = await supabase.auth.passkey.delete({ passkeyId });
    expect([del.error?.status, del.error?.code]).toEqual([403, 'insufficient_aal']);
    expect((await supabase.auth.passkey.list()).data).toHaveLength(1);
  });

  test('the admin lists and deletes a user’s passkeys', async () => {
    const { userId, passkeyId } = await withPasskey();
    const admin = (path: string, method = 'GET') =>
      call(server, method, path, {
        apikey: server.config.serviceRoleKey,
        headers: { authorization: `Bearer ${server.config.serviceRoleKey}` },
      });
    const listed = await admin(`/auth/v1/admin/users/${userId}/passkeys`);
    expect(listed.status).toBe(200);
    expect((listed.body as unknown as { id: string }[]).map((p) => p.id)).toEqual([passkeyId]);
    const notAdmin = await call(server, 'GET', `/auth/v1/admin/users/${userId}/passkeys`);
    expect([notAdmin.status, notAdmin.body.error_code]).toEqual([403, 'not_admin']);
    const deleted = await admin(`/auth/v1/admin/users/${userId}/passkeys/${passkeyId}`, 'DELETE');
    expect(deleted.status).toBe(204);
    const again = await admin(`/auth/v1/admin/users/${userId}/passkeys/${passkeyId}`, 'DELETE');
    expect(again.status).toBe(404);
  });

  test('a deleted account keeps no passkey', async () => {
    const { userId } = await withPasskey();
    await server.pool.query('select auth.soft_delete_user($1)', [userId]);
    const left = await server.pool.query(
      'select count(*)::int as n from auth.webauthn_credentials where user_id = $1',
      [userId],
    );
    expect(left.rows[0].n).toBe(0);
  });
});

test('with PASSKEY_ENABLED=off the routes answer passkey_disabled and /settings says so', async () => {
  const off = await startTestServer({ APP_URL: ORIGIN, PASSKEY_ENABLED: 'false' });
  try {
    const res = await call(off, 'POST', '/auth/v1/passkeys/authentication/options', { body: {} });
    expect([res.status, res.body.error_code]).toEqual([404, 'passkey_disabled']);
    const settings = await call(off, 'GET', '/auth/v1/settings');
    expect(settings.body.passkeys_enabled).toBe(false);
  } finally {
    await off.close();
  }
  expect((await call(server, 'GET', '/auth/v1/settings')).body.passkeys_enabled).toBe(true);
});
