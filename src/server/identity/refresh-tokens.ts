// In charge of refresh token values. A token names its session (its first 22 characters, the
// session id in base64url) followed by a secret: random for a session's first token, and an HMAC
// of the parent token under a server key for each child. Only SHA-256 hashes are stored, yet a
// client that retries a refresh with the parent can be handed the very same child again
// (GoTrue's parent rule), and an older token is recognised by deriving forward from it.
import { createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';

export interface RefreshTokenKey {
  key: Buffer;
}

/** How many generations back a presented token is still recognised as this session's (reuse). */
export const REUSE_DETECTION_GENERATIONS = 100;

const SESSION_PART = 22;
const SECRET_PART = 43;

export function createRefreshTokenKey(jwtSecret: string): RefreshTokenKey {
  const derived = hkdfSync('sha256', jwtSecret, 'tenantry', 'refresh-token-derivation', 32);
  return { key: Buffer.from(derived) };
}

function sessionPart(sessionId: string): string {
  return Buffer.from(sessionId.replace(/-/g, ''), 'hex').toString('base64url');
}

/** A session's first token. */
export function newRefreshToken(sessionId: string): string {
  return sessionPart(sessionId) + randomBytes(32).toString('base64url');
}

/** The child of `parent` in the session `sessionId` (the session a parent of before 0034 does not name). */
export function childRefreshToken(key: RefreshTokenKey, parent: string, sessionId: string): string {
  return sessionPart(sessionId) + createHmac('sha256', key.key).update(parent, 'utf8').digest('base64url');
}

/** A child as derived before tokens named their session: for a retry across that upgrade. */
export function legacyChildRefreshToken(key: RefreshTokenKey, parent: string): string {
  return createHmac('sha256', key.key).update(parent, 'utf8').digest('base64url');
}

/** The session a token names, or null for a token that names none (one issued before 0034). */
export function sessionOfRefreshToken(token: string): string | null {
  if (token.length !== SESSION_PART + SECRET_PART) return null;
  const bytes = Buffer.from(token.slice(0, SESSION_PART), 'base64url');
  if (bytes.length !== 16 || bytes.toString('base64url') !== token.slice(0, SESSION_PART)) return null;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The hashes of the next `generations` tokens after `token` in its session's chain. */
export function descendantHashes(
  key: RefreshTokenKey,
  token: string,
  sessionId: string,
  generations = REUSE_DETECTION_GENERATIONS,
): Buffer[] {
  const hashes: Buffer[] = [];
  let current = token;
  for (let i = 0; i < generations; i++) {
    current = childRefreshToken(key, current, sessionId);
    hashes.push(hashRefreshToken(current));
  }
  return hashes;
}

export function hashRefreshToken(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

/** Same shape rule GoTrue applies before any lookup: long, URL-safe, no padding. */
export function isWellFormedRefreshToken(token: string): boolean {
  return /^[A-Za-z0-9_-]{12,128}$/.test(token);
}
