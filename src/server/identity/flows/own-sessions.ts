// In charge of the sessions a signed-in user sees and ends from the app's Security page: where
// the account is signed in (the browser and system each session was opened from, its address,
// when it was opened and last renewed), ending one of them, or every one but the current.
// Ending a session deletes it, and with it its refresh tokens; its access tokens stop working at
// once, as every request checks that its session still stands (docs/decisions/0045).
import Bowser from 'bowser';
import { recordAccountEvent } from '../audit.js';
import { withService } from '../../db/transactions.js';
import type { AccessTokenClaims } from '../access-tokens.js';
import { requireLiveUser, type IdentityDeps } from './context.js';

export interface OwnSession {
  id: string;
  /** "Chrome 131 on macOS", or null when the session's client did not say */
  device: string | null;
  ip: string | null;
  createdAt: Date;
  lastUsedAt: Date;
  current: boolean;
  /** whether the session passed two-step verification */
  aal: string;
}

/** The sessions this page lists at most: the newest first; the rest are ended with "all others". */
export const OWN_SESSIONS_SHOWN = 50;

/** A person's words for a User-Agent header: browser (major version) and system. */
export function describeDevice(userAgent: string | null): string | null {
  if (!userAgent) return null;
  const parsed = Bowser.parse(userAgent);
  const browser = parsed.browser.name
    ? `${parsed.browser.name}${parsed.browser.version ? ` ${parsed.browser.version.split('.')[0]}` : ''}`
    : null;
  const system = parsed.os.name ?? null;
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? userAgent.slice(0, 60);
}

export async function listOwnSessions(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
): Promise<{ sessions: OwnSession[]; total: number }> {
  return withService(deps.pool, async (tx) => {
    const user = await requireLiveUser(tx, claims);
    const found = await tx.query<{
      id: string;
      user_agent: string | null;
      ip: string | null;
      created_at: Date;
      last_used_at: Date;
      aal: string;
      app: string | null;
      total: string;
    }>(
      `select id, user_agent, host(ip) as ip, created_at, aal,
              -- a session an OAuth client holds is named by the app, not its HTTP library (0093)
              (select coalesce(c.client_name, 'An app') from auth.oauth_clients c
                where c.id = oauth_client_id) as app,
              greatest(created_at, refreshed_at, refresh_rotated_at) as last_used_at,
              count(*) over () as total
       from auth.sessions
       where user_id = $1 and (not_after is null or not_after > now())
       order by id = $2 desc, greatest(created_at, refreshed_at, refresh_rotated_at) desc
       limit $3`,
      [user.id, claims.session_id, OWN_SESSIONS_SHOWN],
    );
    return {
      total: Number(found.rows[0]?.total ?? 0),
      sessions: found.rows.map((row) => ({
        id: row.id,
        device: row.app ? `${row.app} (connected app)` : describeDevice(row.user_agent),
        ip: row.ip,
        createdAt: row.created_at,
        lastUsedAt: row.last_used_at,
        current: row.id === claims.session_id,
        aal: row.aal,
      })),
    };
  });
}

/**
 * Ends one of the caller's own sessions, not the current one (signing out does that). True when
 * a session was ended; another user's session id ends nothing.
 */
export async function endOwnSession(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  sessionId: string,
): Promise<boolean> {
  if (sessionId === claims.session_id) return false;
  return withService(deps.pool, async (tx) => {
    const user = await requireLiveUser(tx, claims);
    const ended = await tx.query('delete from auth.sessions where id = $1 and user_id = $2', [
      sessionId,
      user.id,
    ]);
    if (!ended.rowCount) return false;
    await recordAccountEvent(tx, {
      action: 'token_revoked',
      userId: user.id,
      target: { type: 'session', id: sessionId },
    });
    return true;
  });
}
