// Deleting one's own account (what the web app's settings offer): the caller proves the account is
// theirs with the current password, through the sign-in backoff, or, for an account without a
// password, by typing its address; with a verified second factor only from a session that passed
// it. Every refusal changes nothing.
import { decodeJwt } from 'jose';
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createLogger } from '../../src/server/logger.js';
import { createPlatform } from '../../src/server/platform.js';
import type { AccessTokenClaims } from '../../src/server/identity/access-tokens.js';
import type { IdentityService } from '../../src/server/identity/service.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let identity: IdentityService;
beforeAll(async () => {
  server = await startTestServer();
  ({ identity } = createPlatform({
    config: server.config,
    pool: server.pool,
    logger: createLogger('silent'),
  }));
});
afterAll(async () => server?.close());

let counter = 0;
const PASSWORD = 'correct horse battery';
const email = (label: string) => `${label}-${++counter}-${Date.now()}@example.com`;
const claimsOf = (token: string) => decodeJwt(token) as unknown as AccessTokenClaims;
const exists = async (id: string) =>
  (await server.pool.query('select 1 from auth.users where id = $1', [id])).rowCount === 1;
const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: { status?: number; code?: string }) => ({ status: error.status, code: error.code }),
  );

test('the current password proves it; a wrong or missing one is refused and changes nothing', async () => {
  const supabase = server.client();
  const { data } = await supabase.auth.signUp({ email: email('pw'), password: PASSWORD });
  const claims = claimsOf(data.session!.access_token);
  await expect(
    refusal(identity.deleteOwnAccount(claims, { currentPassword: 'wrong password' })),
  ).resolves.toEqual({
    status: 400,
    code: 'current_password_invalid',
  });
  await expect(refusal(identity.deleteOwnAccount(claims, {}))).resolves.toEqual({
    status: 400,
    code: 'current_password_required',
  });
  expect(await exists(claims.sub)).toBe(true);
  await identity.deleteOwnAccount(claims, { currentPassword: PASSWORD });
  expect(await exists(claims.sub)).toBe(false);
});

test('an account without a password proves it with its address typed out', async () => {
  const admin = server.adminClient().auth.admin;
  const address = email('nopw');
  const created = await admin.createUser({ email: address, email_confirm: true });
  const link = await admin.generateLink({ type: 'magiclink', email: address });
  const signedIn = await server.client().auth.verifyOtp({
    email: address,
    token: link.data.properties!.email_otp,
    type: 'magiclink',
  });
  expect(signedIn.error).toBeNull();
  const claims = claimsOf(signedIn.data.session!.access_token);
  expect(created.data.user!.id).toBe(claims.sub);
  expect((await identity.accountSettings(claims)).hasPassword).toBe(false);
  await expect(refusal(identity.deleteOwnAccount(claims, { email: 'someone@example.com' }))).resolves.toEqual(
    {
      status: 400,
      code: 'email_mismatch',
    },
  );
  expect(await exists(claims.sub)).toBe(true);
  await identity.deleteOwnAccount(claims, { email: address.toUpperCase() });
  expect(await exists(claims.sub)).toBe(false);
});

test('with a verified second factor, only a session that passed it may delete the account', async () => {
  const address = email('mfa');
  const supabase = server.client();
  await supabase.auth.signUp({ email: address, password: PASSWORD });
  const enrolled = await supabase.auth.mfa.enroll({ factorType: 'totp' });
  const code = new TOTP({ secret: Secret.fromBase32(enrolled.data!.totp.secret) }).generate();
  expect(
    (await supabase.auth.mfa.challengeAndVerify({ factorId: enrolled.data!.id, code })).error,
  ).toBeNull();
  const strong = (await supabase.auth.getSession()).data.session!.access_token;

  // a second sign-in with the password alone is at aal1
  const other = server.client();
  const weak = await other.auth.signInWithPassword({ email: address, password: PASSWORD });
  const weakClaims = claimsOf(weak.data.session!.access_token);
  expect(weakClaims.aal).toBe('aal1');
  await expect(
    refusal(identity.deleteOwnAccount(weakClaims, { currentPassword: PASSWORD })),
  ).resolves.toEqual({ status: 401, code: 'insufficient_aal' });
  expect(await exists(weakClaims.sub)).toBe(true);
  await identity.deleteOwnAccount(claimsOf(strong), { currentPassword: PASSWORD });
  expect(await exists(weakClaims.sub)).toBe(false);
});
