// In charge of private channels' permissions: what the caller's own policies on realtime.messages
// allow for one topic, asked of PostgreSQL under the caller's role and claims, as Supabase asks
// them. Reading: probe rows for the topic are inserted with the server's rights, and the caller
// may read if their SELECT sees them. Sending: the caller may send if their own INSERT of such a
// row passes. Every probe row is rolled back; nothing is kept.
import type { Claims } from '../db/transactions.js';
import { withRls, withService } from '../db/transactions.js';
import type { Pool } from '../db/pool.js';
import type { Caller } from '../identity/caller.js';

export interface Permissions {
  readBroadcast: boolean;
  readPresence: boolean;
  writeBroadcast: boolean;
  writePresence: boolean;
}

const EVERYTHING: Permissions = {
  readBroadcast: true,
  readPresence: true,
  writeBroadcast: true,
  writePresence: true,
};

/**
 * Refuses (with the database's error) a user whose session has ended or whose account is banned
 * or deleted, as every data-API request does: a token outlives a sign-out until it expires.
 */
export async function requireActiveCaller(pool: Pool, caller: Caller): Promise<void> {
  if (caller.kind !== 'user') return;
  await withRls(pool, caller.claims as unknown as Claims, async () => undefined, { readOnly: true });
}

/** Row-level security refused an insert (42501), which is an answer rather than a failure. */
function isRefusal(error: unknown): boolean {
  return (error as { code?: unknown }).code === '42501';
}

/**
 * The caller's permissions on `topic` (without the `realtime:` prefix). The service role
 * bypasses row-level security, as it does everywhere. A user whose session has ended, or whose
 * account is banned or deleted, is refused with the database's error (internal.require_active_caller).
 */
export async function permissionsFor(pool: Pool, caller: Caller, topic: string): Promise<Permissions> {
  if (caller.kind === 'service') return EVERYTHING;
  const claims = caller.claims as Claims;
  return withService(pool, async (tx) => {
    // Everything after this savepoint (probe rows, role, claims) is undone by rolling back to it.
    await tx.query('savepoint probe');
    const inserted = await tx.query<{ id: string; extension: string }>(
      `insert into realtime.messages (topic, extension, private, event)
       values ($1, 'broadcast', true, 'probe'), ($1, 'presence', true, 'probe')
       returning id, extension`,
      [topic],
    );
    const sub = typeof claims.sub === 'string' ? claims.sub : '';
    await tx.query(
      `select set_config('request.jwt.claims', $1, true), set_config('request.jwt.claim.sub', $2, true),
              set_config('request.jwt.claim.role', $3, true), set_config('realtime.topic', $4, true),
              set_config('role', $3, true)`,
      [JSON.stringify(claims), sub, claims.role, topic],
    );
    // A token outlives a sign-out, a ban or a deletion: the database refuses such a caller here.
    if (caller.kind === 'user') await tx.query('select internal.require_active_caller()');
    const visible = await tx.query<{ extension: string }>(
      'select extension from realtime.messages where id = any($1::uuid[])',
      [inserted.rows.map((row) => row.id)],
    );
    const seen = new Set(visible.rows.map((row) => row.extension));
    const canInsert = async (extension: string): Promise<boolean> => {
      await tx.query('savepoint write_probe');
      try {
        await tx.query(
          `insert into realtime.messages (topic, extension, private, event) values ($1, $2, true, 'probe')`,
          [topic, extension],
        );
        return true;
      } catch (error) {
        if (isRefusal(error)) return false;
        throw error;
      } finally {
        await tx.query('rollback to savepoint write_probe');
      }
    };
    const permissions: Permissions = {
      readBroadcast: seen.has('broadcast'),
      readPresence: seen.has('presence'),
      writeBroadcast: await canInsert('broadcast'),
      writePresence: await canInsert('presence'),
    };
    await tx.query('rollback to savepoint probe');
    return permissions;
  });
}
