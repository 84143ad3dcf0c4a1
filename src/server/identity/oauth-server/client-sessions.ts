// In charge of telling a person's own session from one issued to an OAuth client. A client acts
// for the user on their data (the data API, storage, realtime, reading /user), but what changes
// the account itself stays with the person: its address, password, phone, linked identities,
// second factors and passkeys, consent and grants, and the user's other sessions. Otherwise an
// app the user let read their projects could take the account over, or outlive its revocation.
import type { Queryable } from '../../db/pool.js';
import type { AccessTokenClaims } from '../access-tokens.js';
import { authError } from '../errors.js';

export const clientTokenRefused = () =>
  authError(403, 'oauth_client_token', 'A token issued to an OAuth client cannot do this');

/**
 * Throws 403 oauth_client_token for a token of a client's session. The session decides, not only
 * the claim: every token of a client's session carries client_id, but one minted by the
 * operator's own tooling for that session need not.
 */
export async function requireOwnSession(db: Queryable, claims: AccessTokenClaims): Promise<void> {
  if (claims.client_id) throw clientTokenRefused();
  const session = await db.query<{ oauth_client_id: string | null }>(
    'select oauth_client_id from auth.sessions where id = $1',
    [claims.session_id],
  );
  if (session.rows[0]?.oauth_client_id) throw clientTokenRefused();
}
