// The verified-token cache is bounded by bytes (VERIFIED_TOKEN_CACHE_BYTES): after thousands of
// large distinct tokens its counted bytes stay under the bound, the heap it keeps stays near it,
// the newest tokens are the ones remembered, and a remembered token still expires.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, test } from 'vitest';
import {
  createTokenSigner,
  signAccessToken,
  verifyAccessToken,
  type AccessTokenSubject,
} from '../../src/server/identity/access-tokens.js';

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

const BOUND = 4 * 1024 * 1024;

function subject(i: number): AccessTokenSubject {
  return {
    userId: crypto.randomUUID(),
    aud: 'authenticated',
    role: 'authenticated',
    email: `user${i}@example.com`,
    phone: '',
    appMetadata: { provider: 'email', providers: ['email'] },
    // Large tokens, as an account with bulky metadata gets (about 11 kB each).
    userMetadata: { bio: 'x'.repeat(8000), i },
    isAnonymous: false,
    sessionId: crypto.randomUUID(),
    aal: 'aal1',
    amr: [{ method: 'password', timestamp: 1_700_000_000 }],
  };
}

test('many large distinct tokens keep the cache under its bound in counted bytes and in heap', async () => {
  const signer = createTokenSigner({
    secret: 'a-secret-of-at-least-thirty-two-characters!',
    issuer: 'http://x/auth/v1',
    ttlSeconds: 3600,
    verifiedCacheBytes: BOUND,
  });
  gc();
  const baseline = process.memoryUsage().heapUsed;
  let last = '';
  let tokenBytes = 0;
  for (let i = 0; i < 3000; i++) {
    const { token } = await signAccessToken(signer, subject(i));
    await verifyAccessToken(signer, token);
    tokenBytes += token.length;
    expect(signer.verified.bytes).toBeLessThanOrEqual(BOUND);
    last = token;
  }
  gc();
  const kept = process.memoryUsage().heapUsed - baseline;
  console.log(
    `verified-token cache: ${(tokenBytes / 1e6).toFixed(1)} MB of tokens verified, ` +
      `${signer.verified.size} kept, counted ${(signer.verified.bytes / 1e6).toFixed(2)} MB, heap +${(kept / 1e6).toFixed(2)} MB`,
  );
  // 33 MB of tokens went through; the cache holds what fits in 4 MiB, the newest ones.
  expect(tokenBytes).toBeGreaterThan(30e6);
  expect(signer.verified.size).toBeGreaterThan(100);
  expect(signer.verified.size).toBeLessThan(3000);
  expect(signer.verified.get(last)).toBeDefined();
  expect(kept).toBeLessThan(BOUND * 1.5);
});

test('a remembered token still expires, and a bound of 0 remembers nothing', async () => {
  const signer = createTokenSigner({
    secret: 'a-secret-of-at-least-thirty-two-characters!',
    issuer: 'http://x/auth/v1',
    ttlSeconds: 2,
    verifiedCacheBytes: BOUND,
  });
  const { token } = await signAccessToken(signer, subject(0));
  await verifyAccessToken(signer, token);
  expect(signer.verified.size).toBe(1);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  await expect(verifyAccessToken(signer, token)).rejects.toMatchObject({ status: 401 });
  expect(signer.verified.size).toBe(0);
  expect(signer.verified.bytes).toBe(0);

  const none = createTokenSigner({
    secret: 'a-secret-of-at-least-thirty-two-characters!',
    issuer: 'http://x/auth/v1',
    ttlSeconds: 3600,
    verifiedCacheBytes: 0,
  });
  const fresh = await signAccessToken(none, subject(1));
  expect((await verifyAccessToken(none, fresh.token)).sub).toBeDefined();
  expect(none.verified.size).toBe(0);
});
