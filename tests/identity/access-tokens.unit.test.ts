// Access tokens signed with JWT_SECRET (no key set) or a key set's signing key (ES256, RS256, HS256)
// are the JWS jose makes for the same claims and verify with jose and with our verifier; they carry
// every claim as given (quotes, separators, emoji), and a signer with another key refuses them.
import { SignJWT, exportJWK, generateKeyPair, importJWK, jwtVerify, type JWK } from 'jose';
import { expect, test } from 'vitest';
import {
  createTokenSigner,
  signAccessToken,
  verifyAccessToken,
  type AccessTokenSubject,
} from '../../src/server/identity/access-tokens.js';
import { generateDevKeys, parseKeySet } from '../../src/server/identity/signing-keys.js';

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

const secretBytes = new TextEncoder().encode('a-secret-of-at-least-thirty-two-characters!');

/** What jose's SignJWT makes of the subject's claims with this header and key. */
function joseToken(header: { alg: string; typ: string; kid?: string }, now: number) {
  return new SignJWT({
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
    .setProtectedHeader(header)
    .setIssuer('http://x/auth/v1')
    .setSubject(subject.userId)
    .setAudience(subject.aud)
    .setIssuedAt(now)
    .setExpirationTime(now + 3600);
}

test('a token signed with JWT_SECRET is byte for byte what jose signs for the same claims', async () => {
  const signer = hsSigner('a-secret-of-at-least-thirty-two-characters!');
  const now = 1_700_000_123;
  const { token, expiresAt } = await signAccessToken(signer, subject, now);
  const expected = await joseToken({ alg: 'HS256', typ: 'JWT' }, now).sign(secretBytes);
  expect(token).toBe(expected);
  expect(expiresAt).toBe(now + 3600);
});

test('a fresh token verifies, with jose and with our verifier; another key refuses it', async () => {
  const signer = hsSigner('a-secret-of-at-least-thirty-two-characters!');
  const { token } = await signAccessToken(signer, subject);
  const { payload } = await jwtVerify(token, secretBytes, { algorithms: ['HS256'] });
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

const keySetSigner = async (keys: string) =>
  createTokenSigner({
    secret: 'unused-secret-of-at-least-thirty-two-characters',
    issuer: 'http://x/auth/v1',
    ttlSeconds: 3600,
    keys: await parseKeySet(keys),
    acceptSecret: false,
  });

async function keyPair(alg: 'RS256' | 'ES256') {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `${alg.toLowerCase()}-key`;
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid, alg, use: 'sig', key_ops: ['sign', 'verify'] };
  return { kid, privateKey, publicKey, keys: JSON.stringify([jwk]) };
}

test('the RS256 and HS256 keys of a key set sign byte for byte what jose signs, with the kid in the header', async () => {
  const now = 1_700_000_123;
  const rsa = await keyPair('RS256');
  const rs = await signAccessToken(await keySetSigner(rsa.keys), subject, now);
  expect(rs.token).toBe(
    await joseToken({ alg: 'RS256', typ: 'JWT', kid: rsa.kid }, now).sign(rsa.privateKey),
  );

  const octet = new TextEncoder().encode('a-key-set-secret-of-at-least-thirty-two-bytes');
  const oct = JSON.stringify([
    { kty: 'oct', k: Buffer.from(octet).toString('base64url'), kid: 'hs', alg: 'HS256', key_ops: ['sign'] },
  ]);
  const hs = await signAccessToken(await keySetSigner(oct), subject, now);
  expect(hs.token).toBe(await joseToken({ alg: 'HS256', typ: 'JWT', kid: 'hs' }, now).sign(octet));
});

test('an ES256 token (randomised signature) verifies with jose against the published key and with our verifier', async () => {
  const ec = await keyPair('ES256');
  const signer = await keySetSigner(ec.keys);
  const now = Math.floor(Date.now() / 1000);
  const { token } = await signAccessToken(signer, subject, now);
  const [header, payload, signature] = token.split('.');
  const [joseHeader, josePayload] = (
    await joseToken({ alg: 'ES256', typ: 'JWT', kid: ec.kid }, now).sign(ec.privateKey)
  ).split('.');
  expect([header, payload]).toEqual([joseHeader, josePayload]);
  expect(Buffer.from(signature!, 'base64url')).toHaveLength(64); // r || s, as JWS wants, not DER

  const published = await importJWK(signer.jwks.keys[0]!, 'ES256');
  const verified = await jwtVerify(token, published, { algorithms: ['ES256'] });
  expect(verified.payload).toMatchObject({ sub: subject.userId, user_metadata: subject.userMetadata });
  expect((await verifyAccessToken(signer, token)).session_id).toBe(subject.sessionId);

  const stranger = await keySetSigner(await generateDevKeys());
  await expect(verifyAccessToken(stranger, token)).rejects.toMatchObject({ status: 401 });
});
