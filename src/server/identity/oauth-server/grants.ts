// In charge of a user's grants to OAuth clients (GET and DELETE /user/oauth/grants): the clients
// they have consented to, with the scopes, and taking a consent back, which ends every session the
// client holds for them at once (a token of those sessions stops working on its next request,
// decision 0045) and makes any code not yet exchanged worthless.
import type { Pool } from '../../db/pool.js';
import { withService } from '../../db/transactions.js';
import { recordAccountEvent } from '../audit.js';
import { authError, errors } from '../errors.js';
import { clientDetails } from './authorizations.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface Grant {
  client: ReturnType<typeof clientDetails>;
  scopes: string[];
  granted_at: string;
}

/** The user's live consents, newest first; a deleted client's are left out (GoTrue skips them). */
export async function listGrants(pool: Pool, userId: string): Promise<Grant[]> {
  const { rows } = await pool.query<{
    client_id: string;
    client_name: string | null;
    client_uri: string | null;
    logo_uri: string | null;
    scopes: string[];
    granted_at: Date;
  }>(
    `select c.id as client_id, c.client_name, c.client_uri, c.logo_uri, g.scopes, g.granted_at
      from auth.oauth_consents g
      join auth.oauth_clients c on c.id = g.client_id and c.deleted_at is null
      where g.user_id = $1 and g.revoked_at is null
      order by g.granted_at desc, c.id`,
    [userId],
  );
  return rows.map((row) => ({
    client: clientDetails(row),
    scopes: row.scopes,
    granted_at: row.granted_at.toISOString(),
  }));
}

/** Takes a consent back and ends the client's sessions for this user, in one transaction. */
export async function revokeGrant(
  pool: Pool,
  userId: string,
  rawClientId: string | undefined,
): Promise<void> {
  if (!rawClientId) throw errors.validation('client_id is required');
  if (!UUID.test(rawClientId)) throw errors.validation('invalid client_id format');
  const clientId = rawClientId.toLowerCase();
  await withService(pool, async (tx) => {
    const revoked = await tx.query(
      `update auth.oauth_consents set revoked_at = now()
        where user_id = $1 and client_id = $2 and revoked_at is null`,
      [userId, clientId],
    );
    if (!revoked.rowCount)
      throw authError(404, 'oauth_consent_not_found', 'No active grant found for this client');
    const ended = await tx.query('delete from auth.sessions where user_id = $1 and oauth_client_id = $2', [
      userId,
      clientId,
    ]);
    await recordAccountEvent(tx, {
      action: 'oauth_grant_revoked',
      userId,
      target: { type: 'oauth_client', id: clientId },
      details: { sessions_ended: ended.rowCount ?? 0 },
    });
  });
}
