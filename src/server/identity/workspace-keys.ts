// In charge of workspace API keys on the wire: turning `Authorization: Bearer tnt_...` into the
// key's principal (decision 0091), refusing unknown, forged, revoked and expired keys alike, and
// counting each key's requests against its per-minute allowance.
import { timingSafeEqual } from 'node:crypto';
import type { Queryable } from '../db/pool.js';
import { errors } from './errors.js';
import { enforceLimits } from './rate-limit.js';
import { secretDigest } from './secrets.js';

/** 'tnt_' + 16 hex characters (the lookup id) + 43 base64url characters (32 random bytes). */
const KEY_SHAPE = /^tnt_([0-9a-f]{16})[A-Za-z0-9_-]{43}$/;
const LAST_USED_EVERY_MS = 60_000;
// Compared against when no key has the lookup id, so an unknown id costs what a wrong secret does.
const NO_KEY_HASH = secretDigest('tnt_no-such-key');

export interface WorkspaceKeyClaims {
  sub: string;
  role: 'authenticated';
  aud: 'authenticated';
  aal: 'aal1';
  is_anonymous: false;
  app_metadata: { provider: 'api_key'; workspace_id: string; api_key_role: string };
  user_metadata: Record<string, never>;
  api_key_id: string;
  workspace_id: string;
  exp: number;
}

export interface WorkspaceKeyVerifier {
  /** The key's claims; throws 401 for a key that is not one, 429 past its allowance. */
  verify(bearer: string): Promise<WorkspaceKeyClaims>;
}

export function looksLikeWorkspaceKey(bearer: string): boolean {
  return bearer.startsWith('tnt_');
}

interface KeyRow {
  id: string;
  workspace_id: string;
  role: string;
  secret_hash: Buffer;
  usable: boolean;
  last_used_at: Date | null;
}

export function createWorkspaceKeyVerifier(
  db: Queryable,
  options: { requestsPerMinute: number },
): WorkspaceKeyVerifier {
  // When this instance last marked each key used: most requests then skip the write entirely.
  const markedAt = new Map<string, number>();
  return {
    async verify(bearer) {
      const match = KEY_SHAPE.exec(bearer);
      const given = secretDigest(bearer);
      // Read on every request, so a revocation or an expiry holds from the very next request.
      const row = match
        ? (
            await db.query<KeyRow>(
              `select k.id, k.workspace_id, k.role, k.secret_hash, k.last_used_at,
                      (k.revoked_at is null and (k.expires_at is null or k.expires_at > now())) as usable
               from internal.api_keys k where k.lookup = $1`,
              [match[1]],
            )
          ).rows[0]
        : undefined;
      const equal = timingSafeEqual(given, row?.secret_hash ?? NO_KEY_HASH);
      if (!row || !equal || !row.usable) throw errors.badJwt('Invalid API key');
      await enforceLimits(db, [
        { bucket: `api_key:${row.id}`, max: options.requestsPerMinute, windowSeconds: 60 },
      ]);
      markUsed(db, markedAt, row);
      return {
        sub: row.id,
        role: 'authenticated',
        aud: 'authenticated',
        aal: 'aal1',
        is_anonymous: false,
        app_metadata: { provider: 'api_key', workspace_id: row.workspace_id, api_key_role: row.role },
        user_metadata: {},
        api_key_id: row.id,
        workspace_id: row.workspace_id,
        // A key has no expiry of its own in the token sense; channels re-check it like a token's.
        exp: Math.floor(Date.now() / 1000) + 3600,
      };
    },
  };
}

function markUsed(db: Queryable, markedAt: Map<string, number>, row: KeyRow): void {
  const now = Date.now();
  const last = Math.max(markedAt.get(row.id) ?? 0, row.last_used_at?.getTime() ?? 0);
  if (now - last < LAST_USED_EVERY_MS) return;
  markedAt.set(row.id, now);
  if (markedAt.size > 10_000) markedAt.clear();
  // The condition keeps instances from writing the same minute twice; a failure only loses a mark.
  void db
    .query(
      `update internal.api_keys set last_used_at = now()
       where id = $1 and (last_used_at is null or last_used_at < now() - interval '1 minute')`,
      [row.id],
    )
    .catch(() => undefined);
}
