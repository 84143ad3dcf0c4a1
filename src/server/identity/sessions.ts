// In charge of sessions and refresh-token rotation: a sign-in opens a session, each refresh
// revokes the presented token and issues its child, a retry with the parent gets the same child,
// any other reuse of a revoked token ends the whole session (token theft is assumed).
import type { Tx } from '../db/transactions.js';
import type { AmrEntry } from './access-tokens.js';
import { errors } from './errors.js';
import {
  childRefreshToken,
  hashRefreshToken,
  isWellFormedRefreshToken,
  newRefreshToken,
  type RefreshTokenKey,
} from './refresh-tokens.js';

export interface SessionRef {
  sessionId: string;
  userId: string;
  refreshToken: string;
  aal: string;
  amr: AmrEntry[];
}

export interface SessionContext {
  userAgent: string | null;
  ip: string | null;
}

export async function openSession(
  tx: Tx,
  userId: string,
  method: string,
  context: SessionContext,
): Promise<SessionRef> {
  const amr: AmrEntry[] = [{ method, timestamp: Math.floor(Date.now() / 1000) }];
  const session = await tx.query<{ id: string }>(
    `insert into auth.sessions (user_id, amr, user_agent, ip) values ($1, $2, $3, $4::inet) returning id`,
    [userId, JSON.stringify(amr), context.userAgent, context.ip],
  );
  const sessionId = session.rows[0]!.id;
  const refreshToken = newRefreshToken();
  await tx.query(`insert into auth.refresh_tokens (token_hash, session_id, user_id) values ($1, $2, $3)`, [
    hashRefreshToken(refreshToken),
    sessionId,
    userId,
  ]);
  await tx.query(`update auth.users set last_sign_in_at = now() where id = $1`, [userId]);
  return { sessionId, userId, refreshToken, aal: 'aal1', amr };
}

interface TokenRow {
  id: string;
  session_id: string;
  user_id: string;
  revoked: boolean;
  expired: boolean;
  aal: string;
  amr: AmrEntry[];
}

/** What a refresh attempt came to: a session to issue tokens for, or detected reuse. */
export type Rotation = { kind: 'rotated'; session: SessionRef } | { kind: 'reuse_detected' };

/**
 * The refresh grant. Locks the session row so concurrent refreshes of one session are
 * serialised (and all see each other's rotation), which makes the parent rule exact.
 * Reuse is returned, not thrown, so the caller commits the session's revocation first.
 */
export async function rotateRefreshToken(
  tx: Tx,
  key: RefreshTokenKey,
  presented: string,
  ttlSeconds: number,
): Promise<Rotation> {
  if (!isWellFormedRefreshToken(presented)) throw errors.validation('Refresh token is not valid');
  const found = await tx.query<TokenRow>(
    `select t.id, t.session_id, t.user_id, t.revoked,
            t.updated_at < now() - make_interval(secs => $2) as expired, s.aal, s.amr
     from auth.refresh_tokens t join auth.sessions s on s.id = t.session_id
     where t.token_hash = $1
     for update of s`,
    [hashRefreshToken(presented), ttlSeconds],
  );
  const token = found.rows[0];
  if (!token) throw errors.refreshNotFound();
  // The lock was taken on the session; re-read the token's state now that we hold it.
  const current = await tx.query<{ revoked: boolean }>(
    'select revoked from auth.refresh_tokens where id = $1',
    [token.id],
  );
  const revoked = current.rows[0]?.revoked ?? true;
  const ref = { sessionId: token.session_id, userId: token.user_id, aal: token.aal, amr: token.amr };

  if (!revoked) {
    if (token.expired) throw errors.refreshExpired();
    const child = childRefreshToken(key, presented);
    await tx.query(`update auth.refresh_tokens set revoked = true, updated_at = now() where id = $1`, [
      token.id,
    ]);
    await tx.query(
      `insert into auth.refresh_tokens (token_hash, session_id, user_id, parent_id) values ($1, $2, $3, $4)`,
      [hashRefreshToken(child), token.session_id, token.user_id, token.id],
    );
    await tx.query(`update auth.sessions set refreshed_at = now(), updated_at = now() where id = $1`, [
      token.session_id,
    ]);
    return { kind: 'rotated', session: { ...ref, refreshToken: child } };
  }

  // Revoked: allowed only if it is the parent of the session's active token (a lost response).
  const child = childRefreshToken(key, presented);
  const active = await tx.query<{ id: string }>(
    `select id from auth.refresh_tokens
     where parent_id = $1 and token_hash = $2 and not revoked`,
    [token.id, hashRefreshToken(child)],
  );
  if (active.rows[0]) return { kind: 'rotated', session: { ...ref, refreshToken: child } };

  // Anything else is reuse of a stolen or stale token: end the session for everyone holding it.
  await revokeSession(tx, token.session_id);
  return { kind: 'reuse_detected' };
}

/** Deletes the session; its refresh tokens go with it, and its access tokens stop passing /user. */
export async function revokeSession(tx: Tx, sessionId: string): Promise<void> {
  await tx.query('delete from auth.sessions where id = $1', [sessionId]);
}

export type LogoutScope = 'global' | 'local' | 'others';

export async function logout(tx: Tx, userId: string, sessionId: string, scope: LogoutScope): Promise<void> {
  if (scope === 'local') {
    await tx.query('delete from auth.sessions where id = $1 and user_id = $2', [sessionId, userId]);
  } else if (scope === 'others') {
    await tx.query('delete from auth.sessions where user_id = $1 and id <> $2', [userId, sessionId]);
  } else {
    await tx.query('delete from auth.sessions where user_id = $1', [userId]);
  }
}

export async function sessionExists(tx: Tx, sessionId: string, userId: string): Promise<boolean> {
  const result = await tx.query('select 1 from auth.sessions where id = $1 and user_id = $2', [
    sessionId,
    userId,
  ]);
  return (result.rowCount ?? 0) > 0;
}
