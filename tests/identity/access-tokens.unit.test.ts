// Access tokens signed with JWT_SECRET (no key set) verify with jose and with our verifier, carry
// every claim as given (quotes, separators, emoji), and a signer with another secret refuses them.
import { SignJWT, jwtVerify } from 'jose';
import { expect, test } from 'vitest';
import {
  createTokenSigner,
  signAccessToken,
  verifyAccessToken,
  type AccessTokenSubject,
} from '../../src/server/identity/access-tokens.js';

const hsSigner = (secret: string) =>
  createTokenSigner({ secret, issuer: 'http://x/auth/v1', ttlSeconds: 3600, keys: null, acceptSecret: true });

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

test('a token signed with JWT_SECRET is byte for byte what jose signs for the same claims', async () => {
  const signer = hsSigner('a-secret-of-at-least-thirty-two-characters!');
  const now = 1_700_000_123;
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
    .setIssuer('http://x/auth/v1')
    .setSubject(subject.userId)
    .setAudience(subject.aud)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600)
    .sign(await signer.signing.key);
  expect(token).toBe(expected);
  expect(expiresAt).toBe(now + 3600);
});

test('a fresh token verifies, with jose and with our verifier; another key refuses it', async () => {
  const signer = hsSigner('a-secret-of-at-least-thirty-two-characters!');
  const { token } = await signAccessToken(signer, subject);
  const { payload } = await jwtVerify(token, await signer.signing.key, { algorithms: ['HS256'] });
  expect(payload).toMatchObject({
    app_metadata: subject.appMetadata,
    user_metadata: subject.userMetadata,
    sub: subject.userId,
    session_id: subject.sessionId,
    role: 'authenticated',
  });
  expect((await verifyAccessToken(signer, token)).sub).toBe(subject.userId);
  const other = hsSigner('another-secret-of-at-least-thirty-two-chars');
  await expect(verifyAccessToken(other, token)).rejects.toMatchObject({ status: 401 });
});
