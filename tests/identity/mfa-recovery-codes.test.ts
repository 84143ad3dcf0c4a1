// Recovery codes, the web app's stand-in for the authenticator app, through the identity service
// the web app calls (sessions made with the real supabase-js client): made only from an aal2
// session, each raises an aal1 session to aal2 once, wrong ones are limited per user, and they
// go with the last verified factor.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { Secret, TOTP } from 'otpauth';
import { createTokenSigner, verifyAccessToken } from '../../src/server/identity/access-tokens.js';
import { IdentityService, identityDepsFrom } from '../../src/server/identity/service.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let service: IdentityService;
let signer: ReturnType<typeof createTokenSigner>;

beforeAll(async () => {
  server = await startTestServer({ RATE_LIMIT_MFA_FAILURES: '3' });
  const { config } = server;
  signer = createTokenSigner({
    secret: config.jwtSecret,
    issuer: config.jwtIssuer,
    ttlSeconds: config.accessTokenTtlSeconds,
    keys: config.jwtKeys,
    acceptSecret: config.jwtSecretAccepted,
  });
  service = new IdentityService(identityDepsFrom(config, server.pool, signer));
});
afterAll(async () => {
  await server?.close();
});

let counter = 0;
const PASSWORD = 'correct horse battery';
const claimsOf = (token: string) => verifyAccessToken(signer, token);

async function userWithFactor() {
  const email = `recovery${++counter}-${Date.now()}@example.com`;
  const supabase = server.client();
  const signUp = await supabase.auth.signUp({ email, password: PASSWORD });
  expect(signUp.error).toBeNull();
  const { data } = await supabase.auth.mfa.enroll({ factorType: 'totp' });
  const totp = new TOTP({ secret: Secret.fromBase32(data!.totp.secret), digits: 6, period: 30 });
  const verified = await supabase.auth.mfa.challengeAndVerify({ factorId: data!.id, code: totp.generate() });
  expect(verified.error).toBeNull();
  return { email, factorId: data!.id, strong: await claimsOf(verified.data!.access_token) };
}

async function passwordSession(email: string) {
  const { data, error } = await server.client().auth.signInWithPassword({ email, password: PASSWORD });
  expect(error).toBeNull();
  return claimsOf(data.session!.access_token);
}

test('codes are made from an aal2 session only; each raises an aal1 session to aal2 once', async () => {
  const { email, strong } = await userWithFactor();
  const weak = await passwordSession(email);
  await expect(service.regenerateRecoveryCodes(weak)).rejects.toMatchObject({
    status: 403,
    code: 'insufficient_aal',
  });

  const codes = await service.regenerateRecoveryCodes(strong);
  expect(codes).toHaveLength(10);
  expect(new Set(codes).size).toBe(10);
  const stored = await server.pool.query<{ code_hash: Buffer }>(
    'select code_hash from auth.mfa_recovery_codes c join auth.users u on u.id = c.user_id where u.email = $1',
    [email],
  );
  expect(stored.rows).toHaveLength(10);
  for (const row of stored.rows) expect(row.code_hash.toString('utf8')).not.toContain(codes[0]!.slice(0, 5));

  const raised = await service.verifyRecoveryCode(weak, codes[0]!.toUpperCase());
  const claims = await claimsOf(raised.access_token);
  expect(claims.aal).toBe('aal2');
  expect(claims.amr.map((e) => e.method)).toEqual(['mfa/recovery_code', 'password']);
  expect((await service.factorsOf(claims.sub)).recoveryCodesLeft).toBe(9);

  const again = await passwordSession(email);
  await expect(service.verifyRecoveryCode(again, codes[0]!)).rejects.toMatchObject({
    status: 422,
    code: 'mfa_verification_failed',
  });
  // New codes void the old ones.
  const fresh = await service.regenerateRecoveryCodes(claims);
  await expect(service.verifyRecoveryCode(again, codes[1]!)).rejects.toMatchObject({
    code: 'mfa_verification_failed',
  });
  await expect(service.verifyRecoveryCode(again, fresh[0]!)).resolves.toMatchObject({ token_type: 'bearer' });
});

test('wrong recovery codes are limited per user: past the limit even a right one waits', async () => {
  const { email, strong } = await userWithFactor();
  const codes = await service.regenerateRecoveryCodes(strong);
  const weak = await passwordSession(email);
  for (let i = 0; i < 3; i++) {
    await expect(service.verifyRecoveryCode(weak, `wrong-guess${i}`)).rejects.toMatchObject({ status: 422 });
  }
  await expect(service.verifyRecoveryCode(weak, codes[0]!)).rejects.toMatchObject({
    status: 429,
    code: 'over_request_rate_limit',
  });
});

test('removing the last verified factor removes the recovery codes', async () => {
  const { strong, factorId } = await userWithFactor();
  await service.regenerateRecoveryCodes(strong);
  await service.unenrollFactor(strong, factorId);
  expect((await service.factorsOf(strong.sub)).recoveryCodesLeft).toBe(0);
  await expect(service.regenerateRecoveryCodes(strong)).rejects.toMatchObject({
    code: 'mfa_factor_not_found',
  });
});
