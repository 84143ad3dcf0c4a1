// In charge of access tokens: minting HS256 JWTs with the claims Supabase puts in them, and
// verifying presented tokens (algorithm pinned, signature, expiry, audience, required claims).
import { createHmac } from 'node:crypto';
import { jwtVerify, errors as joseErrors } from 'jose';
import { errors } from './errors.js';

export interface AmrEntry {
  method: string;
  timestamp: number;
}

export interface AccessTokenSubject {
  userId: string;
  aud: string;
  role: string;
  email: string;
  phone: string;
  appMetadata: Record<string, unknown>;
  userMetadata: Record<string, unknown>;
  isAnonymous: boolean;
  sessionId: string;
  aal: string;
  amr: AmrEntry[];
}

export interface AccessTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  exp: number;
  iat: number;
  email: string;
  phone: string;
  app_metadata: Record<string, unknown>;
  user_metadata: Record<string, unknown>;
  role: string;
  aal: string;
  amr: AmrEntry[];
  session_id: string;
  is_anonymous: boolean;
}

export interface TokenSigner {
  key: Uint8Array;
  issuer: string;
  ttlSeconds: number;
  /** the key imported once for WebCrypto, instead of on every verification */
  verifyKey: Promise<CryptoKey>;
  /** tokens already verified, until they expire: clients send the same token with every request */
  verified: Map<string, AccessTokenClaims>;
}

/** Verified tokens remembered at most (the oldest is forgotten first); about 1 kB each. */
const VERIFIED_TOKENS = 10_000;

export function createTokenSigner(secret: string, issuer: string, ttlSeconds: number): TokenSigner {
  const key = new TextEncoder().encode(secret);
  const verifyKey = crypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  return { key, issuer, ttlSeconds, verifyKey, verified: new Map() };
}

/** The protected header of every token we sign, encoded once. */
const HS256_HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

/**
 * Signs with node:crypto's HMAC directly: the same bytes jose's SignJWT produces (same header,
 * same claim order), without importing the key into WebCrypto and a promise chain per token,
 * which was most of a refresh grant's CPU outside the database.
 */
export async function signAccessToken(
  signer: TokenSigner,
  subject: AccessTokenSubject,
  now = Math.floor(Date.now() / 1000),
): Promise<{ token: string; expiresAt: number }> {
  const expiresAt = now + signer.ttlSeconds;
  const payload = Buffer.from(
    JSON.stringify({
      email: subject.email,
      phone: subject.phone,
      app_metadata: subject.appMetadata,
      user_metadata: subject.userMetadata,
      role: subject.role,
      aal: subject.aal,
      amr: subject.amr,
      session_id: subject.sessionId,
      is_anonymous: subject.isAnonymous,
      iss: signer.issuer,
      sub: subject.userId,
      aud: subject.aud,
      iat: now,
      exp: expiresAt,
    }),
  ).toString('base64url');
  const signingInput = `${HS256_HEADER}.${payload}`;
  const signature = createHmac('sha256', signer.key).update(signingInput).digest('base64url');
  return { token: `${signingInput}.${signature}`, expiresAt };
}

/** Verifies a user access token; any failure is a 401 bad_jwt naming the reason. */
export async function verifyAccessToken(signer: TokenSigner, token: string): Promise<AccessTokenClaims> {
  // The same string verified before is the same signature over the same claims: only its expiry
  // can have changed. (Sessions are not consulted here, so remembering changes nothing else.)
  const known = signer.verified.get(token);
  if (known) {
    if (known.exp > Math.floor(Date.now() / 1000)) return known;
    signer.verified.delete(token);
    throw errors.badJwt('token is expired');
  }
  const claims = await verifySignedToken(signer, token);
  signer.verified.set(token, claims);
  if (signer.verified.size > VERIFIED_TOKENS) signer.verified.delete(signer.verified.keys().next().value!);
  return claims;
}

async function verifySignedToken(signer: TokenSigner, token: string): Promise<AccessTokenClaims> {
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, await signer.verifyKey, { algorithms: ['HS256'] }));
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw errors.badJwt('token is expired');
    if (error instanceof joseErrors.JWSSignatureVerificationFailed)
      throw errors.badJwt('signature is invalid');
    if (error instanceof joseErrors.JOSEAlgNotAllowed) throw errors.badJwt('signing method is not allowed');
    throw errors.badJwt('token is malformed');
  }
  const { sub, role, session_id: sessionId, exp, iat } = payload;
  if (
    typeof sub !== 'string' ||
    typeof role !== 'string' ||
    typeof exp !== 'number' ||
    typeof iat !== 'number'
  ) {
    throw errors.badJwt('required claims are missing');
  }
  if (role !== 'authenticated' || typeof sessionId !== 'string') {
    throw errors.badJwt('not a user access token');
  }
  return payload as unknown as AccessTokenClaims;
}
