// Access tokens are signed with node:crypto directly: they must be the very bytes jose's SignJWT
// makes for the same claims (same header, claim order and signature), and verify with jose.
import { SignJWT, jwtVerify } from 'jose';
import { expect, test } from 'vitest';
import {
  createTokenSigner,
  signAccessToken,
  verifyAccessToken,
  type AccessTokenSubject,
} from '../../src/server/identity/access-tokens.js';

const subject: AccessTokenSubject = {
  userId: '6f1b7c1e-2a44-4c1b-9a59-0e7c3d1f2b11',
  aud: 'authenticated',
  role: 'authenticated',
  email: 'ada@example.com',
  phone: '',
  appMetadata: { provider: 'email', providers: ['email'], quote: `"'\\ \u2028 ✓ 😀` },
  userMetadata: { name: 'Ada "the first" Lovelace', nested: { list: [1, null, true] } },
  isAnonymous: false,
  sessionId: '0b5f1c55-8d64-4a39-8c0c-5c8cbe8f8e01',
  aal: 'aal1',
  amr: [{ method: 'password', timestamp: 1_700_000_000 }],
};

test('the token is byte for byte what jose signs for the same claims', async () => {
  const signer = createTokenSigner('a-secret-of-at-least-thirty-two-characters!', 'http://x/auth/v1', 3600);
  const now = 1_800_000_000;
  const { token, expiresAt } = await signAccessToken(signer, subject, now);
  const expected = await new SignJWT({
    email: subject.email,
    phone: subject.phone,
    app_metadata: subject.appMetadata,
    user_metadata: subject.userMetadata,
    role: subject.role,
    aal: subject.aal,
    amr: subject.amr,
    session_id: subject.sessionId,
    is_anonymous: subject.isAnonymous,
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(signer.issuer)
    .setSubject(subject.userId)
    .setAudience(subject.aud)
    .setIssuedAt(now)
    .setExpirationTime(expiresAt)
    .sign(signer.key);
  expect(token).toBe(expected);
  expect(expiresAt).toBe(now + 3600);
});

test('a fresh token verifies, with jose and with our verifier; another key refuses it', async () => {
  const signer = createTokenSigner('a-secret-of-at-least-thirty-two-characters!', 'http://x/auth/v1', 3600);
  const { token } = await signAccessToken(signer, subject);
  const { payload } = await jwtVerify(token, signer.key, { algorithms: ['HS256'] });
  expect(payload).toMatchObject({
    sub: subject.userId,
    session_id: subject.sessionId,
    role: 'authenticated',
  });
  expect((await verifyAccessToken(signer, token)).sub).toBe(subject.userId);
  const other = createTokenSigner('another-secret-of-at-least-thirty-two-chars', 'http://x/auth/v1', 3600);
  await expect(verifyAccessToken(other, token)).rejects.toMatchObject({ status: 401 });
});
