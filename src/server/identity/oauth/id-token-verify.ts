// In charge of checking an ID token a client brings (native and one-tap sign-in) with jose: the
// issuer's signing keys, fetched with a timeout and cached (createRemoteJWKSet), found from a fixed
// key URL or the issuer's discovery document; then signature, issuer and expiry, and at_hash when
// the client also brings the access token. Who the token names is decided by the caller.
import { createHash } from 'node:crypto';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWTPayload } from 'jose';

export interface KeySettings {
  /** ID_TOKEN_JWKS_TIMEOUT_MS: how long a key or discovery fetch may take */
  timeoutMs: number;
  /** ID_TOKEN_JWKS_CACHE_MS: how long fetched keys are used before being fetched again */
  cacheMs: number;
}

/** The token failed a check: the message is for logs; the client is told GoTrue's "Bad ID token". */
export class IdTokenRejected extends Error {
  override name = 'IdTokenRejected';
}

type KeySet = ReturnType<typeof createRemoteJWKSet>;

// One key set per URL for the life of the process, so keys are fetched once per cache period
// (and again at once, within jose's cooldown, when a token names a kid not yet seen).
const keySets = new Map<string, KeySet>();
const discovered = new Map<string, { jwksUrl: string; until: number }>();
// Microsoft's issuers are one per tenant and the token names the tenant, so the caches are
// bounded: past this many entries the oldest goes.
const MAX_CACHED = 256;

function remember<V>(cache: Map<string, V>, key: string, value: V): void {
  if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
}

function keySet(url: string, settings: KeySettings): KeySet {
  const key = `${url} ${settings.timeoutMs} ${settings.cacheMs}`;
  let set = keySets.get(key);
  if (!set) {
    set = createRemoteJWKSet(new URL(url), {
      timeoutDuration: settings.timeoutMs,
      cacheMaxAge: settings.cacheMs,
    });
    remember(keySets, key, set);
  }
  return set;
}

async function discoverKeys(issuer: string, settings: KeySettings): Promise<string> {
  const cached = discovered.get(issuer);
  if (cached && cached.until > Date.now()) return cached.jwksUrl;
  const response = await fetch(`${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`, {
    signal: AbortSignal.timeout(settings.timeoutMs),
    redirect: 'error',
  });
  if (!response.ok) throw new IdTokenRejected(`discovery of ${issuer} answered ${response.status}`);
  const document = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
  // A discovery document speaks for its own issuer only (OpenID Connect Discovery 4.3).
  if (document.issuer !== issuer || typeof document.jwks_uri !== 'string') {
    throw new IdTokenRejected(`discovery of ${issuer} names another issuer or no jwks_uri`);
  }
  remember(discovered, issuer, { jwksUrl: document.jwks_uri, until: Date.now() + settings.cacheMs });
  return document.jwks_uri;
}

/** The iss claim, unverified: only to choose which issuer's keys to try (Microsoft's tenants). */
export function unverifiedIssuer(idToken: string): string | null {
  try {
    const iss = decodeJwt(idToken).iss;
    return typeof iss === 'string' ? iss : null;
  } catch {
    return null;
  }
}

// OpenID Connect Core 3.1.3.6: the left half of the hash the token's algorithm uses.
function hashFor(alg: string): string | null {
  const bits = /(\d{3})$/.exec(alg)?.[1];
  if (alg === 'EdDSA' || alg === 'Ed25519') return 'sha512';
  if (bits === '256' || bits === '384' || bits === '512') return `sha${bits}`;
  return null;
}

function accessTokenHash(alg: string, accessToken: string): string {
  const algorithm = hashFor(alg);
  if (!algorithm) throw new IdTokenRejected(`no at_hash rule for ${alg}`);
  const digest = createHash(algorithm).update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

export interface VerifyInput {
  idToken: string;
  /** the iss values accepted */
  issuers: string[];
  /** a fixed key URL, or null to read it from the (first) issuer's discovery document */
  jwksUrl: string | null;
  /** checked against at_hash when the token has one */
  accessToken: string | null;
}

/** The verified claims, or IdTokenRejected. */
export async function verifyIdToken(input: VerifyInput, settings: KeySettings): Promise<JWTPayload> {
  let payload: JWTPayload;
  try {
    const url = input.jwksUrl ?? (await discoverKeys(input.issuers[0]!, settings));
    ({ payload } = await jwtVerify(input.idToken, keySet(url, settings), {
      issuer: input.issuers,
      requiredClaims: ['exp', 'iat'],
    }));
  } catch (error) {
    if (error instanceof IdTokenRejected) throw error;
    throw new IdTokenRejected((error as Error).message, { cause: error });
  }
  if (input.accessToken && typeof payload.at_hash === 'string') {
    const { alg } = decodeProtectedHeader(input.idToken);
    if (accessTokenHash(alg ?? '', input.accessToken) !== payload.at_hash) {
      throw new IdTokenRejected('access token hash does not match at_hash');
    }
  }
  return payload;
}
