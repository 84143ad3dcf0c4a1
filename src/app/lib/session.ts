// In charge of the signed-in user for pages and server actions: reads the session cookie, checks
// the access token, and stores or clears sessions. Refreshing needs to write cookies, which pages
// cannot do, so a page whose token is about to expire bounces through /session/refresh.
import { auditedIdentity } from '@/app/lib/audit-context';
import { cookies } from 'next/headers';
import { redirect } from 'next/navigation';
import type { Claims } from '@/server/db/transactions';
import { verifyAccessToken, type AccessTokenClaims } from '@/server/identity/access-tokens';
import { getRuntime } from '@/server/runtime';
import {
  readSession,
  sessionCookieName,
  sessionCookies,
  type StoredSession,
} from '@/server/web-session/cookies';

/** Refresh this long before expiry, so a request never carries a token that lapses mid-way. */
const REFRESH_MARGIN_SECONDS = 120;

export interface SignedIn {
  userId: string;
  email: string;
  /** the verified access token's claims, as the identity service takes them */
  token: AccessTokenClaims;
  /** the same claims as a database transaction takes them (row-level security reads them) */
  claims: Claims;
  /** the session passed a second factor */
  aal2: boolean;
}

function services() {
  const runtime = getRuntime();
  if (!runtime.identity || !runtime.signer)
    throw new Error('The identity service is not running in this process');
  return { ...runtime, identity: auditedIdentity(runtime.identity), signer: runtime.signer };
}

export async function readStoredSession(): Promise<StoredSession | null> {
  const { config } = getRuntime();
  const jar = await cookies();
  return readSession(sessionCookieName(config.authUrl), (name) => jar.get(name)?.value);
}

/** Writes (or, with null, clears) the session cookies. Only server actions and route handlers may. */
export async function storeSession(session: StoredSession | null): Promise<void> {
  const { config } = getRuntime();
  const jar = await cookies();
  const name = sessionCookieName(config.authUrl);
  const secure = config.appUrl.startsWith('https://');
  for (const cookie of sessionCookies(
    name,
    session,
    jar.getAll().map((c) => c.name),
    secure,
  )) {
    jar.set(cookie.name, cookie.value, cookie.options);
  }
}

/** A signed-in session that has not passed the second factor its user set up. */
export interface HalfSignedIn {
  secondStepDue: true;
  user: SignedIn;
}

async function sessionUser(): Promise<SignedIn | HalfSignedIn | null> {
  const session = await readStoredSession();
  if (!session) return null;
  let user: SignedIn;
  try {
    const claims = await verifyAccessToken(services().signer, session.access_token);
    if (claims.exp - Math.floor(Date.now() / 1000) < REFRESH_MARGIN_SECONDS) return null;
    user = {
      userId: claims.sub,
      email: claims.email,
      token: claims,
      claims: claims as unknown as Claims,
      aal2: claims.aal === 'aal2',
    };
  } catch {
    return null;
  }
  const standing = await services().identity.sessionStanding(user.token);
  // A token outlives its session's sign-out, a ban or a deletion: the database decides.
  if (standing === 'ended') return null;
  // Whoever set up a second factor passes it before anything else in the app.
  if (standing === 'second-step-due') return { secondStepDue: true, user };
  return user;
}

/** The session's user whether or not the second step is still due (the operator console decides). */
export async function sessionAtAnyStep(): Promise<SignedIn | HalfSignedIn | null> {
  return sessionUser();
}

/** The signed-in user, or null when there is no usable session (or the second step is still due). */
export async function currentUser(): Promise<SignedIn | null> {
  const found = await sessionUser();
  return found && !('secondStepDue' in found) ? found : null;
}

/** The user of a session whose second step is due (for the second-step page), else null. */
export async function halfSignedInUser(): Promise<SignedIn | null> {
  const found = await sessionUser();
  return found && 'secondStepDue' in found ? found.user : null;
}

/** The second-step page, coming back to `path`. */
export function secondStepPath(path: string | null): string {
  return path ? `/sign-in/two-step?next=${encodeURIComponent(path)}` : '/sign-in/two-step';
}

/**
 * For pages: the signed-in user, or a redirect (to refresh an expiring session, else to sign in).
 * `path` is where to come back to.
 */
export async function requireUser(path: string): Promise<SignedIn> {
  const found = await sessionUser();
  if (found && 'secondStepDue' in found) redirect(secondStepPath(path));
  if (found) return found;
  const session = await readStoredSession();
  if (session) redirect(`/session/refresh?next=${encodeURIComponent(path)}`);
  redirect(`/sign-in?next=${encodeURIComponent(path)}`);
}

/**
 * For server actions: the signed-in user, or a redirect to sign in that comes back to `path` (an
 * action has no page of its own to return to, and cannot refresh a session on the way).
 */
export async function signedInOrSignIn(path: string): Promise<SignedIn> {
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(path)}`);
  return user;
}

export { services };
export { localPath, safeNext } from '@/app/lib/redirect-target';
