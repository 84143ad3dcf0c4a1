// In charge of e-mail links for the server-rendered pages (sign-up confirmation, password reset,
// sign-in links): each request makes a PKCE verifier, kept in an HttpOnly cookie, and sends the
// identity service its challenge, so the e-mailed link comes back to /auth/confirm with a `?code=`
// that only this browser can exchange for a session (what @supabase/ssr does).
import { createHash, randomBytes } from 'node:crypto';
import { cookies } from 'next/headers';
import type { PkceChallenge } from '@/server/identity/pkce';
import { getRuntime } from '@/server/runtime';

const VERIFIER_COOKIE = 'tenantry-pkce-verifier';
/** As long as an e-mailed link lives (MAILER_OTP_EXP's default). */
const VERIFIER_MAX_AGE_SECONDS = 3600;

/** A new verifier in the cookie, and the challenge to send with the request. */
export async function startEmailFlow(): Promise<PkceChallenge> {
  const verifier = randomBytes(32).toString('base64url');
  const jar = await cookies();
  jar.set(VERIFIER_COOKIE, verifier, {
    httpOnly: true,
    sameSite: 'lax',
    secure: getRuntime().config.appUrl.startsWith('https://'),
    path: '/',
    maxAge: VERIFIER_MAX_AGE_SECONDS,
  });
  return { codeChallenge: createHash('sha256').update(verifier).digest('base64url'), method: 's256' };
}

/** The verifier of this browser's latest e-mail flow, used up (only route handlers and actions). */
export async function takeVerifier(): Promise<string | null> {
  const jar = await cookies();
  const verifier = jar.get(VERIFIER_COOKIE)?.value ?? null;
  if (verifier) jar.delete(VERIFIER_COOKIE);
  return verifier;
}

/** Where an e-mailed link brings the browser back to, then on to `next` (a path of this app). */
export function confirmUrl(next: string): string {
  const url = new URL('/auth/confirm', getRuntime().config.appUrl);
  url.searchParams.set('next', next);
  return url.toString();
}
