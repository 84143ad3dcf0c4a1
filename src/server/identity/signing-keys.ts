// In charge of the access-token key set: reading JWT_KEYS (JWKs with their private members),
// choosing the one key that signs, importing every key once as a CryptoKey by kid, and the public
// JWK set published at /.well-known/jwks.json (public members only, never HS256 secrets).
import { exportJWK, generateKeyPair, importJWK, type JWK } from 'jose';

export type TokenAlg = 'ES256' | 'RS256' | 'HS256';
export const TOKEN_ALGS: readonly TokenAlg[] = ['ES256', 'RS256', 'HS256'];

export interface TokenKey {
  kid: string;
  alg: TokenAlg;
  verifyKey: CryptoKey;
  /** null for a key given without its private members: it verifies old tokens but cannot sign */
  signKey: CryptoKey | null;
  /** what jwks.json lists; null for HS256 keys, which are secrets */
  publicJwk: JWK | null;
}

export interface TokenKeySet {
  /** every configured key by kid; a token naming another kid is refused */
  byKid: ReadonlyMap<string, TokenKey>;
  signing: TokenKey;
}

export class KeySetError extends Error {
  override name = 'KeySetError';
}

/** Public members per key type: the JWKS is built from this list, so a private member never leaks. */
const PUBLIC_MEMBERS: Record<string, readonly string[]> = { EC: ['crv', 'x', 'y'], RSA: ['n', 'e'] };
const PRIVATE_MEMBERS: Record<string, readonly string[]> = {
  EC: ['d'],
  RSA: ['d', 'p', 'q', 'dp', 'dq', 'qi'],
  oct: ['k'],
};
const KTY_OF: Record<TokenAlg, string> = { ES256: 'EC', RS256: 'RSA', HS256: 'oct' };
const MIN_RSA_BITS = 2048;
const MIN_HMAC_BYTES = 32;

function base64urlBytes(value: unknown): number {
  return typeof value === 'string' && /^[A-Za-z0-9_-]+$/.test(value)
    ? Buffer.from(value, 'base64url').length
    : 0;
}

interface CheckedJwk {
  jwk: JWK & Record<string, unknown>;
  kid: string;
  alg: TokenAlg;
  hasPrivate: boolean;
  marksSign: boolean;
}

function checkJwk(raw: unknown, index: number): CheckedJwk {
  const where = `key ${index + 1}`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new KeySetError(`${where} must be a JWK object`);
  }
  const jwk = raw as JWK & Record<string, unknown>;
  if (typeof jwk.kid !== 'string' || jwk.kid.trim() === '' || jwk.kid.length > 200) {
    throw new KeySetError(`${where} needs a "kid" (a non-empty string)`);
  }
  const named = `${where} (kid ${jwk.kid})`;
  const kty = jwk.kty;
  const alg = (jwk.alg ??
    (kty === 'EC' ? 'ES256' : kty === 'RSA' ? 'RS256' : kty === 'oct' ? 'HS256' : '')) as TokenAlg;
  if (!TOKEN_ALGS.includes(alg)) {
    throw new KeySetError(`${named}: alg must be ES256, RS256 or HS256`);
  }
  if (kty !== KTY_OF[alg]) throw new KeySetError(`${named}: alg ${alg} needs kty ${KTY_OF[alg]}`);
  if (jwk.use !== undefined && jwk.use !== 'sig') throw new KeySetError(`${named}: "use" must be "sig"`);
  if (
    jwk.key_ops !== undefined &&
    !(Array.isArray(jwk.key_ops) && jwk.key_ops.every((o) => typeof o === 'string'))
  ) {
    throw new KeySetError(`${named}: key_ops must be a list of strings`);
  }
  if (
    alg === 'ES256' &&
    (jwk.crv !== 'P-256' || base64urlBytes(jwk.x) !== 32 || base64urlBytes(jwk.y) !== 32)
  ) {
    throw new KeySetError(`${named}: an ES256 key needs crv P-256 and its x and y`);
  }
  if (alg === 'RS256' && (base64urlBytes(jwk.n) * 8 < MIN_RSA_BITS || base64urlBytes(jwk.e) === 0)) {
    throw new KeySetError(`${named}: an RS256 key needs n (at least ${MIN_RSA_BITS} bits) and e`);
  }
  if (alg === 'HS256' && base64urlBytes(jwk.k) < MIN_HMAC_BYTES) {
    throw new KeySetError(`${named}: an HS256 key needs k of at least ${MIN_HMAC_BYTES} bytes`);
  }
  const privateMembers = PRIVATE_MEMBERS[kty]!;
  const present = privateMembers.filter((m) => jwk[m] !== undefined);
  if (present.length > 0 && present.length < privateMembers.length) {
    throw new KeySetError(
      `${named}: private members ${privateMembers.join(', ')} must all be given, or none`,
    );
  }
  return {
    jwk,
    kid: jwk.kid,
    alg,
    hasPrivate: present.length === privateMembers.length,
    marksSign: Array.isArray(jwk.key_ops) && jwk.key_ops.includes('sign'),
  };
}

/** The public JWK as jwks.json lists it: only public members, whitelisted per key type. */
export function publicJwkOf(jwk: JWK & Record<string, unknown>, alg: TokenAlg): JWK {
  const members = Object.fromEntries(PUBLIC_MEMBERS[jwk.kty!]!.map((m) => [m, jwk[m] as string]));
  return { kty: jwk.kty!, ...members, kid: jwk.kid!, alg, use: 'sig', key_ops: ['verify'] };
}

async function importKey(checked: CheckedJwk): Promise<TokenKey> {
  const { jwk, kid, alg } = checked;
  const named = `key kid ${kid}`;
  try {
    if (alg === 'HS256') {
      const secret = Buffer.from(jwk.k as string, 'base64url');
      const key = await crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, [
        'sign',
        'verify',
      ]);
      return { kid, alg, verifyKey: key, signKey: key, publicJwk: null };
    }
    const publicJwk = publicJwkOf(jwk, alg);
    const verifyKey = (await importJWK({ ...publicJwk, key_ops: undefined }, alg)) as CryptoKey;
    let signKey: CryptoKey | null = null;
    if (checked.hasPrivate) {
      const { key_ops: _ops, use: _use, ...material } = jwk;
      signKey = (await importJWK(material, alg)) as CryptoKey;
      // A private half from another pair would sign tokens nobody can verify: check once now.
      const params = alg === 'ES256' ? { name: 'ECDSA', hash: 'SHA-256' } : { name: 'RSASSA-PKCS1-v1_5' };
      const probe = new TextEncoder().encode(`tenantry key check ${kid}`);
      const signature = await crypto.subtle.sign(params, signKey, probe);
      if (!(await crypto.subtle.verify(params, verifyKey, signature, probe))) {
        throw new KeySetError(`${named}: its private members do not belong to its public key`);
      }
    }
    return { kid, alg, verifyKey, signKey, publicJwk };
  } catch (error) {
    if (error instanceof KeySetError) throw error;
    throw new KeySetError(`${named}: not a usable ${alg} key (${(error as Error).message})`);
  }
}

/**
 * Reads JWT_KEYS: a JSON array of JWKs, or a JWK set ({"keys": [...]}). The key whose key_ops
 * include "sign" signs (GoTrue's rule); without one, the first key does. Throws KeySetError.
 */
export async function parseKeySet(json: string): Promise<TokenKeySet> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new KeySetError('must be a JSON array of JWKs (or {"keys": [...]})');
  }
  const list = Array.isArray(parsed)
    ? parsed
    : typeof parsed === 'object' && parsed !== null && Array.isArray((parsed as { keys?: unknown }).keys)
      ? (parsed as { keys: unknown[] }).keys
      : null;
  if (!list || list.length === 0) throw new KeySetError('must list at least one JWK');
  if (list.length > 20) throw new KeySetError('may list at most 20 keys');
  const checked = list.map(checkJwk);
  const kids = new Set<string>();
  for (const key of checked) {
    if (kids.has(key.kid)) throw new KeySetError(`kid ${key.kid} appears twice`);
    kids.add(key.kid);
  }
  const marked = checked.filter((k) => k.marksSign);
  if (marked.length > 1) throw new KeySetError('only one key may have "sign" in its key_ops');
  const signer = marked[0] ?? checked[0]!;
  if (!signer.hasPrivate) {
    throw new KeySetError(`the signing key (kid ${signer.kid}) needs its private members`);
  }
  const imported = await Promise.all(checked.map(importKey));
  const byKid = new Map(imported.map((k) => [k.kid, k]));
  return { byKid, signing: byKid.get(signer.kid)! };
}

/** A fresh ES256 key pair as a one-key JWT_KEYS value (local mode's development key). */
export async function generateDevKeys(): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = crypto.randomUUID();
  return JSON.stringify([{ ...jwk, kid, alg: 'ES256', use: 'sig', key_ops: ['sign', 'verify'] }]);
}
