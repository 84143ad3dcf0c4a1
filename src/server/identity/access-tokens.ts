// In charge of access tokens: minting JWTs with the claims Supabase puts in them (signed by the
// key set's signing key, or HS256 with JWT_SECRET), and verifying presented tokens for every
// caller (identity, data API, web app): one spelling per token (canonical base64url, low-S
// ECDSA), key chosen by kid, algorithm pinned to that key, signature, expiry, required claims.
import { createHmac, KeyObject, sign } from 'node:crypto';
import { decodeProtectedHeader, jwtVerify, errors as joseErrors, type JWK } from 'jose';
import { errors } from './errors.js';
import type { TokenAlg, TokenKey, TokenKeySet } from './signing-keys.js';
import { VerifiedTokenCache } from './verified-tokens.js';

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
  /** the OAuth client the token was issued to (the OAuth 2.1 server's sessions); absent otherwise */
  clientId?: string;
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
  /** present in tokens issued to an OAuth client (GoTrue's client_id claim) */
  client_id?: string;
}

export interface TokenSigner {
  issuer: string;
  ttlSeconds: number;
  /** the key that signs new tokens; its kid goes into the header (none for JWT_SECRET) */
  signing: SigningKey;
  /** every key a token may name by kid, imported once */
  byKid: ReadonlyMap<string, TokenKey>;
  /** JWT_SECRET, for HS256 tokens without a kid while the rotation window is open; else null */
  legacy: Promise<CryptoKey> | null;
  /** the published public keys (GET /.well-known/jwks.json) */
  jwks: { keys: JWK[] };
  /** tokens already verified, until they expire: clients send the same token with every request */
  verified: VerifiedTokenCache;
}

interface SigningKey {
  kid: string | null;
  alg: TokenAlg;
  /** the token's protected header, base64url-encoded once */
  header: string;
  /** the signature of a signing input, base64url */
  sign: (input: string) => string;
}

export interface SignerOptions {
  /** JWT_SECRET: signs when there is no key set; verifies kid-less HS256 tokens while accepted */
  secret: string;
  issuer: string;
  ttlSeconds: number;
  /** JWT_KEYS, parsed: its signing key signs, all its keys verify by kid */
  keys?: TokenKeySet | null;
  /** HS256 tokens signed with JWT_SECRET are still accepted (the rotation window); default true */
  acceptSecret?: boolean;
  /** bytes the verified-token cache may hold (VERIFIED_TOKEN_CACHE_BYTES); default 32 MiB */
  verifiedCacheBytes?: number;
}

function hmacKey(secret: string): Promise<CryptoKey> {
  const bytes = new TextEncoder().encode(secret);
  return crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

export function createTokenSigner(options: SignerOptions): TokenSigner {
  const { keys } = options;
  const legacy = options.acceptSecret === false && keys ? null : hmacKey(options.secret);
  const signing = keys
    ? signingKey(keys.signing.alg, keys.signing.kid, KeyObject.from(keys.signing.signKey!))
    : signingKey('HS256', null, Buffer.from(options.secret, 'utf8'));
  const published = keys ? [...keys.byKid.values()].flatMap((k) => (k.publicJwk ? [k.publicJwk] : [])) : [];
  return {
    issuer: options.issuer,
    ttlSeconds: options.ttlSeconds,
    signing,
    byKid: keys?.byKid ?? new Map(),
    legacy,
    jwks: { keys: published },
    verified: new VerifiedTokenCache(options.verifiedCacheBytes ?? 32 * 1024 * 1024),
  };
}

/** The order of P-256's group: an ECDSA s above half of it is the second spelling of a signature. */
const P256_ORDER = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const P256_HALF_ORDER = P256_ORDER >> 1n;

function bigFrom(bytes: Buffer): bigint {
  return bytes.length === 0 ? 0n : BigInt(`0x${bytes.toString('hex')}`);
}

/**
 * An ES256 signature r||s with s in the lower half: (r, s) and (r, n − s) verify alike, and only
 * the low one is accepted, so every token we sign has the one spelling verification accepts.
 */
function lowS(signature: Buffer): Buffer {
  const s = bigFrom(signature.subarray(32));
  if (s <= P256_HALF_ORDER) return signature;
  const low = Buffer.from((P256_ORDER - s).toString(16).padStart(64, '0'), 'hex');
  return Buffer.concat([signature.subarray(0, 32), low]);
}

/**
 * Signs through node:crypto, synchronously: the JWS that jose's SignJWT makes (same header, same
 * claim order; ES256 as r||s with a low s, RS256 as PKCS#1 v1.5) without a WebCrypto job and a
 * promise chain per token, which cost more than the signature itself (decision 0031).
 */
function signingKey(alg: TokenAlg, kid: string | null, key: KeyObject | Buffer): SigningKey {
  const header = Buffer.from(JSON.stringify({ alg, typ: 'JWT', ...(kid ? { kid } : {}) })).toString(
    'base64url',
  );
  const signWith: Record<TokenAlg, (input: string) => Buffer> = {
    HS256: (input) => createHmac('sha256', key).update(input).digest(),
    ES256: (input) =>
      lowS(sign('sha256', Buffer.from(input), { key: key as KeyObject, dsaEncoding: 'ieee-p1363' })),
    RS256: (input) => sign('sha256', Buffer.from(input), key as KeyObject),
  };
  const signInput = signWith[alg];
  return { kid, alg, header, sign: (input) => signInput(input).toString('base64url') };
}

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
      ...(subject.clientId ? { client_id: subject.clientId } : {}),
      iss: signer.issuer,
      sub: subject.userId,
      aud: subject.aud,
      iat: now,
      exp: expiresAt,
    }),
  ).toString('base64url');
  const signingInput = `${signer.signing.header}.${payload}`;
  return { token: `${signingInput}.${signer.signing.sign(signingInput)}`, expiresAt };
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
  // Only the one canonical spelling of a token got here, so the cache holds each token once.
  signer.verified.set(token, claims);
  return claims;
}

/**
 * Refuses every spelling of a token but its one canonical form, before any key is used. A JWS
 * segment whose last base64url character carries nonzero spare bits decodes to the same bytes
 * as the canonical one (an ES256 or 2048-bit RS256 signature has 4 such bits, 16 spellings;
 * HS256 has 2, 4 spellings), and an ECDSA signature verifies with s or n − s: left open, one token had 32
 * spellings, each verified and remembered on its own.
 */
function requireCanonical(token: string, alg: TokenAlg): void {
  const segments = token.split('.');
  if (segments.length !== 3) throw errors.badJwt(`${UNVERIFIABLE}, token is malformed`);
  for (const segment of segments) {
    if (
      !/^[A-Za-z0-9_-]*$/.test(segment) ||
      Buffer.from(segment, 'base64url').toString('base64url') !== segment
    ) {
      throw errors.badJwt(`${UNVERIFIABLE}, token is malformed: not canonical base64url`);
    }
  }
  if (alg === 'ES256') {
    const signature = Buffer.from(segments[2]!, 'base64url');
    if (signature.length === 64 && bigFrom(signature.subarray(32)) > P256_HALF_ORDER) {
      throw errors.badJwt(`${UNVERIFIABLE}, token signature is invalid: signature is not canonical (high S)`);
    }
  }
}

/** GoTrue's wording, which clients match on: every refusal of the signature says this first. */
const UNVERIFIABLE = 'unable to parse or verify signature';

/**
 * The key a token may be verified with, decided by its header alone: a kid must name a configured
 * key and the alg must be that key's own (so an RS/ES public key can never be used as an HMAC
 * secret, and `none` is never a method); a token without a kid is HS256 under JWT_SECRET or nothing.
 */
async function keyFor(signer: TokenSigner, token: string): Promise<{ alg: TokenAlg; key: CryptoKey }> {
  let header: { alg?: unknown; kid?: unknown };
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw errors.badJwt(`${UNVERIFIABLE}, token is malformed`);
  }
  if (header.kid !== undefined) {
    const key = typeof header.kid === 'string' ? signer.byKid.get(header.kid) : undefined;
    if (!key) throw errors.badJwt(`${UNVERIFIABLE}, token is unverifiable: unrecognized JWT kid`);
    if (header.alg !== key.alg) {
      throw errors.badJwt(`${UNVERIFIABLE}, token signature is invalid: signing method is not allowed`);
    }
    return { alg: key.alg, key: key.verifyKey };
  }
  if (header.alg === 'HS256' && signer.legacy) return { alg: 'HS256', key: await signer.legacy };
  throw errors.badJwt(`${UNVERIFIABLE}, token signature is invalid: signing method is not allowed`);
}

/**
 * GoTrue's admin roles: a token signed by one of our keys that names one of them acts as the
 * service role, as in GoTrue and PostgREST. Whoever holds a signing key can mint any token, so
 * this widens nothing; it lets operators hand out short-lived admin tokens instead of the key.
 */
const ADMIN_ROLES = new Set(['service_role', 'supabase_admin']);

/** True when the token is validly signed (and unexpired, if it says when it expires) and names an admin role. */
export async function isAdminToken(signer: TokenSigner, token: string): Promise<boolean> {
  try {
    const payload = await verifiedPayload(signer, token);
    return typeof payload.role === 'string' && ADMIN_ROLES.has(payload.role);
  } catch {
    return false;
  }
}

async function verifiedPayload(signer: TokenSigner, token: string): Promise<Record<string, unknown>> {
  const { alg, key } = await keyFor(signer, token);
  requireCanonical(token, alg);
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, key, { algorithms: [alg] }));
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired)
      throw errors.badJwt(`${UNVERIFIABLE}, token has invalid claims: token is expired`);
    if (error instanceof joseErrors.JWSSignatureVerificationFailed)
      throw errors.badJwt(`${UNVERIFIABLE}, token signature is invalid: signature is invalid`);
    if (error instanceof joseErrors.JOSEAlgNotAllowed)
      throw errors.badJwt(`${UNVERIFIABLE}, token signature is invalid: signing method is not allowed`);
    throw errors.badJwt(`${UNVERIFIABLE}, token is malformed`);
  }
  return payload;
}

async function verifySignedToken(signer: TokenSigner, token: string): Promise<AccessTokenClaims> {
  const payload = await verifiedPayload(signer, token);
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
