// In charge of what the web app reads and answers of the OAuth 2.1 server for the signed-in person
// (decision 0093): an authorization request for the consent page, the answer to it, the apps they
// have connected and disconnecting one. Each runs within the request, so the audit lines it
// writes name the person's address and browser.
import { auditRequest } from '@/server/identity/audit';
import {
  authorizationDetails,
  decideAuthorization,
  type AuthorizationAnswer,
} from '@/server/identity/oauth-server/authorizations';
import { listGrants, revokeGrant, type Grant } from '@/server/identity/oauth-server/grants';
import { isHttpError } from '@/server/http/errors';
import { requestContext } from '@/app/lib/client';
import { services, type SignedIn } from '@/app/lib/session';

export type { Grant };

/** Whether this instance offers the OAuth server at all (OAUTH_SERVER_ENABLED). */
export function oauthServerEnabled(): boolean {
  return services().identity.deps.oauthServer.enabled;
}

async function withinRequest<T>(work: () => Promise<T>): Promise<T> {
  return auditRequest.run(await requestContext(), work);
}

/**
 * The request the consent page shows, `{redirect_url}` when an earlier consent already covers it,
 * or null when it is unknown, expired, answered or another person's (all told the same way).
 */
export async function consentRequest(user: SignedIn, id: string): Promise<AuthorizationAnswer | null> {
  if (!oauthServerEnabled()) return null;
  const { pool } = services().identity.deps;
  try {
    return await withinRequest(() =>
      authorizationDetails(pool, id, { userId: user.userId, email: user.email }),
    );
  } catch (error) {
    if (isHttpError(error) && (error.status === 404 || error.status === 400)) return null;
    throw error;
  }
}

/** Approves or denies; the URL to send the browser back to the app, or null when it is too late. */
export async function answerConsent(
  user: SignedIn,
  id: string,
  decision: 'approve' | 'deny',
): Promise<string | null> {
  const { pool } = services().identity.deps;
  try {
    const { redirect_url } = await withinRequest(() =>
      decideAuthorization(pool, id, { userId: user.userId, email: user.email }, decision),
    );
    return redirect_url;
  } catch (error) {
    if (isHttpError(error) && (error.status === 404 || error.status === 400)) return null;
    throw error;
  }
}

/** The apps the person has connected, newest first (none while the OAuth server is off). */
export async function connectedApps(user: SignedIn): Promise<Grant[]> {
  if (!oauthServerEnabled()) return [];
  return listGrants(services().identity.deps.pool, user.userId);
}

/** Disconnects an app: its access ends at once. False when it was not connected. */
export async function disconnectApp(user: SignedIn, clientId: string): Promise<boolean> {
  try {
    await withinRequest(() => revokeGrant(services().identity.deps.pool, user.userId, clientId));
    return true;
  } catch (error) {
    if (isHttpError(error) && (error.status === 404 || error.status === 400)) return false;
    throw error;
  }
}
