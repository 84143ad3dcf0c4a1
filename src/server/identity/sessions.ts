// In charge of sessions and refresh-token rotation: a sign-in opens a session, each refresh
// revokes the presented token and issues its child, a retry with the parent within the reuse
// interval gets the same child, any other reuse of a revoked token ends the whole session (token
// theft is assumed). A session keeps its token chain in its own row (docs/decisions/0027).
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/pool.js';
import type { Tx } from '../db/transactions.js';
import type { AmrEntry } from './access-tokens.js';
import { errors } from './errors.js';
import { enforceLimits } from './rate-limit.js';
import {
  childRefreshToken,
  descendantHashes,
  hashRefreshToken,
  isWellFormedRefreshToken,
  legacyChildRefreshToken,
  newRefreshToken,
  sessionOfRefreshToken,
  type RefreshTokenKey,
} from './refresh-tokens.js';
import { signInAddressKey } from './sign-in-backoff.js';
import { userFromJson, type UserWithIdentities } from './users.js';

export interface SessionRef {
  sessionId: string;
  userId: string;
  refreshToken: string;
  aal: string;
  amr: AmrEntry[];
  /** the OAuth client the session was issued to (decision 0093); its tokens carry client_id */
  oauthClientId?: string | null;
}

export interface SessionContext {
  userAgent: string | null;
  ip: string | null;
}

/**
 * Opens a session with its first refresh token and stamps the sign-in, in one statement (so it is
 * atomic without an explicit transaction). Works on the pool or inside a transaction.
 * `signedInWith` names the e-mail whose password was just verified: the same statement clears
 * this address's sign-in failures for it (sign-in-backoff.ts), so a sign-in stays two round trips.
 */
export async function openSession(
  db: Queryable,
  userId: string,
  method: string,
  context: SessionContext,
  signedInWith: string | null = null,
): Promise<SessionRef> {
  const amr: AmrEntry[] = [{ method, timestamp: Math.floor(Date.now() / 1000) }];
  // The id is chosen here because the first refresh token names it.
  const sessionId = randomUUID();
  const refreshToken = newRefreshToken(sessionId);
  const result = await db.query<{ id: string }>({
    name: 'auth.open_session', // prepared: parsed and planned once per connection
    text: `with session as (
       insert into auth.sessions (id, user_id, amr, user_agent, ip, refresh_token_hash, refresh_rotated_at)
       values ($8, $1, $2, $3, $4::inet, $5, now()) returning id
     ), stamp as (
       update auth.users set last_sign_in_at = now() where id = $1
     ), cleared as (
       select internal.password_sign_in_succeeded($6, $7) where $6::text is not null
     ), audited as (
       -- the security audit log's line for the sign-in, in the same statement (decision 0089)
       insert into public.audit_events (actor_id, actor_type, user_id, action, target_type, target_id,
         ip_address, user_agent, details)
       select $1, 'user', $1, 'login', 'session', id::text, $4::inet, left($3, 512),
         jsonb_build_object('method', $9::text)
       from session
     )
     select id from session left join cleared on true`,
    values: [
      userId,
      JSON.stringify(amr),
      context.userAgent,
      context.ip,
      hashRefreshToken(refreshToken),
      signedInWith,
      signInAddressKey(context.ip),
      sessionId,
      method,
    ],
  });
  return { sessionId: result.rows[0]!.id, userId, refreshToken, aal: 'aal1', amr };
}

/** What a refresh grant came to: a session and its user to issue tokens for, or why not. */
export type RefreshOutcome =
  | { kind: 'granted'; session: SessionRef; user: UserWithIdentities }
  | { kind: 'rate_limited'; retryAfterSeconds: number }
  | { kind: 'reuse_detected' | 'expired' | 'not_found' | 'banned' };

interface RefreshGrantRow {
  outcome:
    | 'rotated'
    | 'replayed'
    | 'replayed_legacy'
    | 'expired'
    | 'not_found'
    | 'unknown'
    | 'reuse_detected'
    | 'rate_limited'
    | 'banned';
  retry_after: number | null;
  session: { id: string; user_id: string; aal: string; amr: AmrEntry[] } | null;
  user: Parameters<typeof userFromJson>[0] | null;
  /** the user's second factors, read beside the grant (auth.user_factors_json, migration 0040) */
  factors: Parameters<typeof userFromJson>[1];
  /** the OAuth client the session belongs to, read beside the grant (migration 0099) */
  oauth_client_id: string | null;
}

export interface RefreshRules {
  ttlSeconds: number;
  reuseIntervalSeconds: number;
  maxPerSession: number;
  /** tokens per client address per window that are traced back for reuse */
  tracesPerAddress: number;
  windowSeconds: number;
}

/**
 * The whole refresh grant in one round trip and one commit (auth.refresh_grant): the session the
 * token names is found by its id, and its row rotates the token (one heap-only update); a retry
 * with the parent of the active token, within the reuse interval of its rotation, gets that same
 * child; any other reuse of a revoked token ends the session. The per-session limit is counted
 * and the user read in that same statement; a refused grant changes nothing (but reuse, which
 * ends the session). A single statement is its own transaction, and being a prepared statement it
 * is parsed once per connection. Rarer cases take one more round trip: a token issued before the
 * chain moved into the session row (its session is looked up first), and a token that is not the
 * active one nor its parent (is it an older one of the session? then it is reuse).
 */
export async function refreshGrantInOneCall(
  db: Queryable,
  key: RefreshTokenKey,
  presented: string,
  rules: RefreshRules,
  address: string | null,
): Promise<RefreshOutcome> {
  if (!isWellFormedRefreshToken(presented)) throw errors.validation('Refresh token is not valid');
  const presentedHash = hashRefreshToken(presented);
  const named = sessionOfRefreshToken(presented);
  const sessionId = named ?? (await legacySession(db, presentedHash));
  if (!sessionId) return { kind: 'not_found' };
  const child = childRefreshToken(key, presented, sessionId);
  const legacyChild = named ? null : legacyChildRefreshToken(key, presented);
  const result = await db.query<RefreshGrantRow>({
    name: 'auth.refresh_grant',
    text: `select g.*, auth.user_factors_json((g.session ->> 'user_id')::uuid) as factors,
        (select s.oauth_client_id from auth.sessions s where s.id = (g.session ->> 'id')::uuid) as oauth_client_id
      from auth.refresh_grant($1, $2, $3, $4, $5, $6, $7, $8) g`,
    values: [
      sessionId,
      presentedHash,
      hashRefreshToken(child),
      rules.ttlSeconds,
      rules.reuseIntervalSeconds,
      rules.maxPerSession,
      rules.windowSeconds,
      legacyChild && hashRefreshToken(legacyChild),
    ],
  });
  const row = result.rows[0];
  switch (row?.outcome) {
    case 'rotated':
    case 'replayed':
    case 'replayed_legacy': {
      const session = row.session!;
      return {
        kind: 'granted',
        session: {
          sessionId: session.id,
          userId: session.user_id,
          aal: session.aal,
          amr: session.amr,
          refreshToken: row.outcome === 'replayed_legacy' ? legacyChild! : child,
          oauthClientId: row.oauth_client_id,
        },
        user: userFromJson(row.user!, row.factors),
      };
    }
    case 'rate_limited':
      return { kind: 'rate_limited', retryAfterSeconds: row.retry_after ?? 1 };
    case 'expired':
    case 'reuse_detected':
    case 'banned':
      return { kind: row.outcome };
    case 'unknown': {
      // Tracing a token back costs a hundred derivations, and anyone who has seen an access token
      // knows its session: each client address gets a number of traces per window. Counted per
      // address, not per session, so nobody can use up a session's traces and thereby keep a
      // stolen session alive when its rightful client presents an older token.
      if (address) {
        await enforceLimits(db, [
          {
            bucket: `auth:refresh-trace:${address}`,
            max: rules.tracesPerAddress,
            windowSeconds: rules.windowSeconds,
          },
        ]);
      }
      return (await olderTokenReused(db, key, presented, sessionId))
        ? { kind: 'reuse_detected' }
        : { kind: 'not_found' };
    }
    default:
      return { kind: 'not_found' };
  }
}

/** The session of a token issued before sessions kept their chain (auth.refresh_tokens). */
async function legacySession(db: Queryable, tokenHash: Buffer): Promise<string | null> {
  const result = await db.query<{ session_id: string }>(
    'select session_id from auth.refresh_tokens where token_hash = $1',
    [tokenHash],
  );
  return result.rows[0]?.session_id ?? null;
}

/**
 * A token that names a session but is neither its active token nor that token's parent: if deriving
 * forward from it meets either, it was issued and revoked, so theft is assumed and the session
 * ends. A token the session never had (a guess) changes nothing.
 */
async function olderTokenReused(
  db: Queryable,
  key: RefreshTokenKey,
  presented: string,
  sessionId: string,
): Promise<boolean> {
  const result = await db.query<{ reused: boolean }>('select auth.refresh_token_reused($1, $2) as reused', [
    sessionId,
    descendantHashes(key, presented, sessionId),
  ]);
  return result.rows[0]?.reused === true;
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

export async function sessionExists(tx: Queryable, sessionId: string, userId: string): Promise<boolean> {
  const result = await tx.query('select 1 from auth.sessions where id = $1 and user_id = $2', [
    sessionId,
    userId,
  ]);
  return (result.rowCount ?? 0) > 0;
}
