// In charge of binding an identity link without PKCE to the browser that started it: a random
// secret goes to that browser as an HttpOnly cookie on the /user/identities/authorize answer, its
// SHA-256 stays with the OAuth state, and the callback links only when the browser brings the
// secret back (compared in constant time). A PKCE link needs none of this: its exchange asks for
// the initiator's verifier (docs/decisions/0041).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { OAUTH_STATE_TTL_SECONDS } from './states.js';

export const LINK_BINDING_COOKIE = 'sb-identity-link';

export function newLinkBinding(): string {
  return randomBytes(32).toString('base64url');
}

export function hashLinkBinding(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Whether the cookie's secret is the one the linking flow was started with. */
export function linkBindingMatches(expected: Buffer, secret: string | null | undefined): boolean {
  if (!secret) return false;
  const presented = hashLinkBinding(secret);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/**
 * The cookie's attributes: sent back only to the callback (a top-level GET from the provider,
 * which SameSite=Lax allows), never readable by scripts, gone when the state expires.
 */
export function linkBindingCookieOptions(authUrl: string, maxAge = OAUTH_STATE_TTL_SECONDS) {
  const url = new URL(authUrl);
  return {
    path: `${url.pathname.replace(/\/+$/, '')}/auth/v1/callback`,
    httpOnly: true,
    secure: url.protocol === 'https:',
    sameSite: 'Lax' as const,
    maxAge,
  };
}
