// In charge of refresh token values. A session's first token is random; each child is an HMAC of
// its parent under a server key. Only SHA-256 hashes are stored, yet a client that retries a
// refresh with the parent can be handed the very same child again (GoTrue's parent rule).
import { createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';

export interface RefreshTokenKey {
  key: Buffer;
}

export function createRefreshTokenKey(jwtSecret: string): RefreshTokenKey {
  const derived = hkdfSync('sha256', jwtSecret, 'tenantry', 'refresh-token-derivation', 32);
  return { key: Buffer.from(derived) };
}

export function newRefreshToken(): string {
  return randomBytes(32).toString('base64url');
}

export function childRefreshToken(key: RefreshTokenKey, parent: string): string {
  return createHmac('sha256', key.key).update(parent, 'utf8').digest('base64url');
}

export function hashRefreshToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Same shape rule GoTrue applies before any lookup: long, URL-safe, no padding. */
export function isWellFormedRefreshToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{12,128}$/.test(token);
}
