// TOTP multi-factor authentication through the real supabase-js client (auth.mfa.* and
// auth.admin.mfa.*), with codes computed by otpauth as an authenticator app would: enrolment,
// challenge and verify raising the session to aal2 (claims, refresh, other sessions), replayed,
// wrong and expired codes, the per-factor failure limit, unenrolment rules, the admin's list and
// delete, and secrets sealed at rest.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { decodeJwt } from 'jose';
import { Secret, TOTP } from 'otpauth';
import type { SupabaseClient } from '@supabase/supabase-js';
import { call, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_MFA_FAILURES: '3', SITE_URL: 'https://app.example.com' });
});
afterAll(async () => {
  await server?.close();
});

let counter = 0;
const PASSWORD = 'correct horse battery';

async function signedIn(): Promise<{ supabase: SupabaseClient; email: string; userId: string }> {
  const email = `mfa${++counter}-${Date.now()}@example.com`;
  const supabase = server.client();
  const { data, error } = await supabase.auth.signUp({ email, password: PASSWORD });
  expect(error).toBeNull();
  return { supabase, email, userId: data.user!.id };
}

const codeFor = (secret: string, at = Date.now()) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp: at,
  });

/** A user with a verified TOTP factor, signed in at aal2. */
async function withVerifiedFactor() {
  const user = await signedIn();
  const enrolled = await user.supabase.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Phone' });
  expect(enrolled.error).toBeNull();
  const factorId = enrolled.data!.id;
  const secret = enrolled.data!.totp.secret;
  const verified = await user.supabase.auth.mfa.challengeAndVerify({ factorId, code: codeFor(secret) });
  expect(verified.error).toBeNull();
  return { ...user, factorId, secret };
}

const claimsOf = async (supabase: SupabaseClient) => {
  const { data } = await supabase.auth.getSession();
  return decodeJwt(data.session!.access_token) as {
    aal: string;
    amr: { method: string; timestamp: number }[];
  };
};

test('enrolment returns the secret, an otpauth URI and an SVG QR code; the factor is listed unverified', async () => {
  const { supabase, email } = await signedIn();
  const { data, error } = await supabase.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Laptop' });
  expect(error).toBeNull();
  expect(data!.type).toBe('totp');
  expect(data!.friendly_name).toBe('Laptop');
  expect(data!.totp.secret).toMatch(/^[A-Z2-7]{32}$/);
  const uri = new URL(data!.totp.uri);
  expect(uri.protocol).toBe('otpauth:');
  expect(uri.searchParams.get('secret')).toBe(data!.totp.secret);
  expect(uri.searchParams.get('issuer')).toBe('app.example.com');
  expect(decodeURIComponent(uri.pathname)).toContain(email);
  expect(data!.totp.qr_code).toMatch(/^data:image\/svg\+xml;utf-8,<svg /);

  const factors = await supabase.auth.mfa.listFactors();
  expect(factors.data!.all).toEqual([
    expect.objectContaining({
      id: data!.id,
      factor_type: 'totp',
      status: 'unverified',
      friendly_name: 'Laptop',
    }),
  ]);
  expect(factors.data!.totp).toEqual([]);
  const aal = await supabase.auth.mfa.getAuthenticatorAssuranceLevel();
  expect(aal.data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal1' });

  const again = await supabase.auth.mfa.enroll({ factorType: 'totp', friendlyName: 'Laptop' });
  expect(again.error?.code).toBe('mfa_factor_name_conflict');
  expect(again.error?.status).toBe(422);
});

test('the secret is sealed at rest: the stored value is AES-GCM ciphertext, not the secret', async () => {
  const { supabase } = await signedIn();
  const { data } = await supabase.auth.mfa.enroll({ factorType: 'totp' });
  const stored = await server.pool.query<{ secret: string }>(
    'select secret from auth.mfa_factors where id = $1',
    [data!.id],
  );
  expect(stored.rows[0]!.secret).toMatch(/^v1\./);
  expect(stored.rows[0]!.secret).not.toContain(data!.totp.secret);
});

test('verifying a right code raises the session to aal2 with totp first in amr; refresh keeps it', async () => {
  const { supabase, factorId, secret } = await withVerifiedFactor();
  const claims = await claimsOf(supabase);
  expect(claims.aal).toBe('aal2');
  expect(claims.amr.map((e) => e.method)).toEqual(['totp', 'password']);

  const aal = await supabase.auth.mfa.getAuthenticatorAssuranceLevel();
  expect(aal.data).toMatchObject({ currentLevel: 'aal2', nextLevel: 'aal2' });
  const factors = await supabase.auth.mfa.listFactors();
  expect(factors.data!.totp.map((f) => f.id)).toEqual([factorId]);
  expect(secret).toBeTruthy();

  const refreshed = await supabase.auth.refreshSession();
  expect(refreshed.error).toBeNull();
  expect(decodeJwt(refreshed.data.session!.access_token)).toMatchObject({ aal: 'aal2' });
});

test('a refreshed session still lists the user’s factors, so an aal1 sign-in is still asked for its second factor', async () => {
  const { email, factorId } = await withVerifiedFactor();
  // A new sign-in on another device: aal1, and the client knows a second factor is due.
  const device = server.client();
  const signIn = await device.auth.signInWithPassword({ email, password: PASSWORD });
  expect(signIn.error).toBeNull();
  expect(signIn.data.user!.factors?.map((f) => [f.id, f.status])).toEqual([[factorId, 'verified']]);
  const before = await device.auth.mfa.getAuthenticatorAssuranceLevel();
  expect(before.data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal2' });

  // The refresh answers the same user, factors included (GoTrue loads them with the user), so the
  // client still asks for the second factor after its session was refreshed.
  const refreshed = await device.auth.refreshSession();
  expect(refreshed.error).toBeNull();
  expect(refreshed.data.user!.factors).toEqual(signIn.data.user!.factors);
  const after = await device.auth.mfa.getAuthenticatorAssuranceLevel();
  expect(after.data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal2' });

  // And the user's other fields are rendered alike by both grants.
  const { factors: _a, last_sign_in_at: _b, updated_at: _c, ...signedInUser } = signIn.data.user!;
  const { factors: _d, last_sign_in_at: _e, updated_at: _f, ...refreshedUser } = refreshed.data.user!;
  expect(refreshedUser).toEqual(signedInUser);
});

test('with a verified factor, an aal1 session may not change the password or the address (401 insufficient_aal); an aal2 session may', async () => {
  const { email, supabase: strong } = await withVerifiedFactor();
  const device = server.client();
  const signIn = await device.auth.signInWithPassword({ email, password: PASSWORD });
  expect(signIn.error).toBeNull();

  const password = await device.auth.updateUser({ password: 'another good password' });
  expect(password.error).toMatchObject({
    status: 401,
    code: 'insufficient_aal',
    message: 'AAL2 session is required to update email or password when MFA is enabled.',
  });
  const address = await device.auth.updateUser({ email: `moved-${email}` });
  expect(address.error).toMatchObject({ status: 401, code: 'insufficient_aal' });
  // Nothing changed: the old password still signs in, no address change is pending.
  expect((await server.client().auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
  const stored = await server.pool.query<{ email_change: string | null }>(
    'select email_change from auth.users where email = $1',
    [email],
  );
  expect(stored.rows[0]!.email_change).toBeNull();

  // Metadata is not a credential: the aal1 session may change it.
  const data = await device.auth.updateUser({ data: { theme: 'dark' } });
  expect(data.error).toBeNull();
  expect(data.data.user!.user_metadata).toMatchObject({ theme: 'dark' });

  // The session that passed the second factor may change the password.
  const changed = await strong.auth.updateUser({ password: 'another good password' });
  expect(changed.error).toBeNull();
  expect(
    (await server.client().auth.signInWithPassword({ email, password: 'another good password' })).error,
  ).toBeNull();
});

test('after verification the aal1 refresh token is dead and other aal1 sessions of the user end', async () => {
  const user = await signedIn();
  const other = await server.client().auth.signInWithPassword({ email: user.email, password: PASSWORD });
  expect(other.error).toBeNull();
  const before = (await user.supabase.auth.getSession()).data.session!;
  const { data } = await user.supabase.auth.mfa.enroll({ factorType: 'totp' });
  const verified = await user.supabase.auth.mfa.challengeAndVerify({
    factorId: data!.id,
    code: codeFor(data!.totp.secret),
  });
  expect(verified.error).toBeNull();
  expect(verified.data!.refresh_token).not.toBe(before.refresh_token);
  const raised = decodeJwt(verified.data!.access_token).session_id;
  expect(raised).toBe(decodeJwt(before.access_token).session_id);

  // Only the raised session is left: the other one, still at aal1, ended.
  const sessions = await server.pool.query('select id, aal from auth.sessions where user_id = $1', [
    user.userId,
  ]);
  expect(sessions.rows).toEqual([{ id: raised, aal: 'aal2' }]);
  const otherUser = await call(server, 'GET', '/auth/v1/user', {
    headers: { authorization: `Bearer ${other.data.session!.access_token}` },
  });
  expect(otherUser.body.error_code).toBe('session_not_found');

  // The aal1 refresh token cannot mint tokens any more; presenting it is treated as theft.
  const oldRefresh = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', {
    body: { refresh_token: before.refresh_token },
  });
  expect(oldRefresh.status).toBe(400);
  expect(oldRefresh.body.error_code).toBe('refresh_token_already_used');
});

test('a code is accepted once: replaying it on a new challenge is refused', async () => {
  const { supabase, factorId, secret } = await withVerifiedFactor();
  // The code that verified the factor was the current one; it cannot be used again.
  const { data: challenge } = await supabase.auth.mfa.challenge({ factorId });
  const stored = await server.pool.query<{ last_used_step: string }>(
    'select last_used_step from auth.mfa_factors where id = $1',
    [factorId],
  );
  const usedStep = Number(stored.rows[0]!.last_used_step);
  const replay = await supabase.auth.mfa.verify({
    factorId,
    challengeId: challenge!.id,
    code: codeFor(secret, usedStep * 30_000),
  });
  expect(replay.error?.code).toBe('mfa_verification_failed');
  expect(replay.error?.status).toBe(422);
  // The next time step's code (within the accepted drift) works.
  const next = await supabase.auth.mfa.verify({
    factorId,
    challengeId: challenge!.id,
    code: codeFor(secret, (usedStep + 1) * 30_000),
  });
  expect(next.error).toBeNull();
});

test('a wrong code is refused with GoTrue’s message and changes nothing', async () => {
  const { supabase } = await signedIn();
  const { data } = await supabase.auth.mfa.enroll({ factorType: 'totp' });
  const wrong = await supabase.auth.mfa.challengeAndVerify({ factorId: data!.id, code: '000000' });
  expect(wrong.error?.code).toBe('mfa_verification_failed');
  expect(wrong.error?.message).toBe('Invalid TOTP code entered');
  const factors = await supabase.auth.mfa.listFactors();
  expect(factors.data!.all[0]!.status).toBe('unverified');
  expect((await claimsOf(supabase)).aal).toBe('aal1');
});

test('an expired challenge is refused (mfa_challenge_expired) even with the right code', async () => {
  const { supabase } = await signedIn();
  const { data } = await supabase.auth.mfa.enroll({ factorType: 'totp' });
  const { data: challenge } = await supabase.auth.mfa.challenge({ factorId: data!.id });
  expect(challenge!.expires_at).toBeGreaterThan(Date.now() / 1000 + 250);
  await server.pool.query(
    `update auth.mfa_challenges set created_at = now() - interval '301 seconds' where id = $1`,
    [challenge!.id],
  );
  const late = await supabase.auth.mfa.verify({
    factorId: data!.id,
    challengeId: challenge!.id,
    code: codeFor(data!.totp.secret),
  });
  expect(late.error?.code).toBe('mfa_challenge_expired');
  expect(late.error?.status).toBe(422);
});

test('a verified challenge cannot be verified again, and an unknown challenge is refused', async () => {
  const { supabase } = await signedIn();
  const { data } = await supabase.auth.mfa.enroll({ factorType: 'totp' });
  const { data: challenge } = await supabase.auth.mfa.challenge({ factorId: data!.id });
  const ok = await supabase.auth.mfa.verify({
    factorId: data!.id,
    challengeId: challenge!.id,
    code: codeFor(data!.totp.secret),
  });
  expect(ok.error).toBeNull();
  const again = await supabase.auth.mfa.verify({
    factorId: data!.id,
    challengeId: challenge!.id,
    code: codeFor(data!.totp.secret, Date.now() + 30_000),
  });
  expect(again.error?.code).toBe('mfa_ip_address_mismatch');
  const unknown = await supabase.auth.mfa.verify({
    factorId: data!.id,
    challengeId: crypto.randomUUID(),
    code: '123456',
  });
  expect(unknown.error?.code).toBe('mfa_factor_not_found');
});

test('wrong codes are limited per factor: past the limit even the right code waits (429)', async () => {
  const { supabase } = await signedIn();
  const { data } = await supabase.auth.mfa.enroll({ factorType: 'totp' });
  const factorId = data!.id;
  const codes: (string | undefined)[] = [];
  for (let i = 0; i < 3; i++) {
    codes.push((await supabase.auth.mfa.challengeAndVerify({ factorId, code: '000000' })).error?.code);
  }
  expect(codes).toEqual(Array(3).fill('mfa_verification_failed'));
  const blocked = await supabase.auth.mfa.challengeAndVerify({ factorId, code: codeFor(data!.totp.secret) });
  expect(blocked.error?.status).toBe(429);
  expect(blocked.error?.code).toBe('over_request_rate_limit');
  expect((await supabase.auth.mfa.listFactors()).data!.all[0]!.status).toBe('unverified');
});

test('with a verified factor an aal1 session may not enrol another or unenrol it; an aal2 session may', async () => {
  const { email, factorId, supabase: strong } = await withVerifiedFactor();
  const weak = server.client();
  await weak.auth.signInWithPassword({ email, password: PASSWORD });
  const aal = await weak.auth.mfa.getAuthenticatorAssuranceLevel();
  expect(aal.data).toMatchObject({ currentLevel: 'aal1', nextLevel: 'aal2' });
  expect(aal.data!.currentAuthenticationMethods.map((e) => (typeof e === 'string' ? e : e.method))).toEqual([
    'password',
  ]);

  const enrol = await weak.auth.mfa.enroll({ factorType: 'totp' });
  expect(enrol.error?.code).toBe('insufficient_aal');
  expect(enrol.error?.status).toBe(403);
  const remove = await weak.auth.mfa.unenroll({ factorId });
  expect(remove.error?.code).toBe('insufficient_aal');
  expect(remove.error?.status).toBe(422);

  const removed = await strong.auth.mfa.unenroll({ factorId });
  expect(removed.error).toBeNull();
  expect(removed.data).toEqual({ id: factorId });
  expect((await strong.auth.mfa.listFactors()).data!.all).toEqual([]);
  // The session that the factor raised is back at aal1 on its next tokens.
  const refreshed = await strong.auth.refreshSession();
  expect(decodeJwt(refreshed.data.session!.access_token)).toMatchObject({ aal: 'aal1' });
});

test('a factor of another user is not found; bad ids and bodies get clear errors', async () => {
  const { factorId } = await withVerifiedFactor();
  const stranger = await signedIn();
  const challenge = await stranger.supabase.auth.mfa.challenge({ factorId });
  expect(challenge.error?.status).toBe(404);
  expect(challenge.error?.code).toBe('mfa_factor_not_found');
  const token = (await stranger.supabase.auth.getSession()).data.session!.access_token;
  const headers = { authorization: `Bearer ${token}` };
  const badId = await call(server, 'POST', '/auth/v1/factors/not-a-uuid/challenge', { headers, body: {} });
  expect(badId.status).toBe(404);
  const badType = await call(server, 'POST', '/auth/v1/factors', { headers, body: { factor_type: 'sms' } });
  expect(badType.status).toBe(400);
  expect(badType.body.error_code).toBe('validation_failed');
  const phone = await call(server, 'POST', '/auth/v1/factors', { headers, body: { factor_type: 'phone' } });
  expect(phone.status).toBe(422);
  const noAuth = await call(server, 'POST', '/auth/v1/factors', { body: { factor_type: 'totp' } });
  expect(noAuth.status).toBe(401);
  const enrolled = await stranger.supabase.auth.mfa.enroll({ factorType: 'totp' });
  const emptyCode = await call(server, 'POST', `/auth/v1/factors/${enrolled.data!.id}/verify`, {
    headers,
    body: { challenge_id: crypto.randomUUID(), code: '' },
  });
  expect(emptyCode.status).toBe(400);
});

test('the service role lists and deletes a user’s factors; unknown users are refused', async () => {
  const { userId, factorId, supabase } = await withVerifiedFactor();
  const admin = server.adminClient();
  const listed = await admin.auth.admin.mfa.listFactors({ userId });
  expect(listed.error).toBeNull();
  expect(listed.data!.factors.map((f) => [f.id, f.status])).toEqual([[factorId, 'verified']]);

  const deleted = await admin.auth.admin.mfa.deleteFactor({ userId, id: factorId });
  expect(deleted.error).toBeNull();
  expect((deleted.data as unknown as { data: { id: string } }).data.id).toBe(factorId);
  expect((await admin.auth.admin.mfa.listFactors({ userId })).data!.factors).toEqual([]);
  expect((await supabase.auth.refreshSession()).data.session).toBeTruthy();
  expect((await claimsOf(supabase)).aal).toBe('aal1');

  const unknown = crypto.randomUUID();
  expect((await admin.auth.admin.mfa.listFactors({ userId: unknown })).error?.status).toBe(404);
  expect((await admin.auth.admin.mfa.deleteFactor({ userId: unknown, id: unknown })).error).not.toBeNull();
  const notAdmin = await supabase.auth.admin.mfa.listFactors({ userId });
  expect(notAdmin.error?.status).toBe(403);
});

test('two verifications racing with the same code: exactly one wins', async () => {
  const { supabase } = await signedIn();
  const { data } = await supabase.auth.mfa.enroll({ factorType: 'totp' });
  const factorId = data!.id;
  const token = (await supabase.auth.getSession()).data.session!.access_token;
  const headers = { authorization: `Bearer ${token}` };
  const challenges = await Promise.all(
    [0, 1, 2].map(() =>
      call(server, 'POST', `/auth/v1/factors/${factorId}/challenge`, { headers, body: {} }),
    ),
  );
  const code = codeFor(data!.totp.secret);
  const results = await Promise.all(
    challenges.map((c) =>
      call(server, 'POST', `/auth/v1/factors/${factorId}/verify`, {
        headers,
        body: { challenge_id: c.body.id, code },
      }),
    ),
  );
  expect(results.map((r) => r.status).sort()).toEqual([200, 422, 422]);
  for (const r of results.filter((x) => x.status === 422)) {
    expect(r.body.error_code).toBe('mfa_verification_failed');
  }
});
