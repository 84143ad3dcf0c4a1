// Access tokens signed with JWT_SECRET (no key set) verify with jose and with our verifier, carry
// every claim as given (quotes, separators, emoji), and a signer with another secret refuses them.
import { jwtVerify } from 'jose';
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
