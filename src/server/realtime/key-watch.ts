// In charge of workspace API keys on open channels (decision 0091): every REALTIME_KEY_CHECK_MS
// each instance asks the database, in one query for all its key-authenticated channels, which of
// their keys still reach their workspace, and closes the channels of a key that was revoked,
// expired, or whose creator left the workspace. A key whose standing changed (its creator was
// demoted or promoted) has its private channels' policies judged again.
import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';
import type { Channel } from './topics.js';

/** The system message a channel gets when its key stops being good, as a refreshed bad key gets. */
export const KEY_INVALIDATED = 'Invalid API key';

/** The key a channel acts as, or null for a channel of a person, the service role or anon. */
export function keyOf(channel: Channel): { id: string; role: string } | null {
  const { caller } = channel.caller;
  if (caller.kind !== 'user') return null;
  const claims = caller.claims as { api_key_id?: unknown; app_metadata?: { api_key_role?: unknown } };
  const id = claims.api_key_id;
  const role = claims.app_metadata?.api_key_role;
  return typeof id === 'string' && typeof role === 'string' ? { id, role } : null;
}

/**
 * Each usable key's role in its workspace now: the lesser of its own and its creator's, as
 * tenantry.role answers for a key (migration 0097). A key missing from the answer is revoked,
 * expired, deleted, or its creator is no longer a member (or the workspace requires two-step
 * verification, which a key cannot give).
 */
export async function keyStandings(pool: Pool, ids: string[]): Promise<Map<string, string>> {
  const { rows } = await pool.query<{ id: string; role: string }>(
    `select k.id, least(k.role, m.role)::text as role
     from internal.api_keys k
     join public.workspace_members m on m.workspace_id = k.workspace_id and m.user_id = k.created_by
     where k.id = any($1::uuid[]) and k.revoked_at is null
       and (k.expires_at is null or k.expires_at > now())
       and not exists (select 1 from public.workspaces w where w.id = k.workspace_id and w.require_mfa)`,
    [ids],
  );
  return new Map(rows.map((row) => [row.id, row.role]));
}

export interface KeyWatchDeps {
  pool: Pool;
  logger: Logger;
  /** every joined channel of this instance */
  channels: () => Iterable<Channel>;
  /** closes a channel with a system message saying why */
  shutDown: (channel: Channel, reason: string) => void;
  /** judges a private channel's policies again (its standing changed); closes it if it may no longer read */
  rejudge: (channel: Channel) => Promise<void>;
}

export class KeyWatch {
  // The standing each channel was last judged at, with the key it was judged for (a channel's
  // token can be replaced by another key's). Unseen channels were judged at most at the key's role.
  private readonly judgedAt = new WeakMap<Channel, { id: string; role: string }>();
  private running = false;

  constructor(private readonly deps: KeyWatchDeps) {}

  /** One round: a single query whatever the number of channels; skipped while one is running. */
  async check(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      const watched: { channel: Channel; key: { id: string; role: string } }[] = [];
      for (const channel of this.deps.channels()) {
        const key = keyOf(channel);
        if (key) watched.push({ channel, key });
      }
      if (watched.length === 0) return;
      const standings = await keyStandings(this.deps.pool, [...new Set(watched.map((w) => w.key.id))]);
      const rejudged: Promise<void>[] = [];
      for (const { channel, key } of watched) {
        // The channel may have left, or taken another token, while the database answered.
        if (keyOf(channel)?.id !== key.id) continue;
        const role = standings.get(key.id);
        if (role === undefined) {
          this.deps.shutDown(channel, KEY_INVALIDATED);
          continue;
        }
        const judged = this.judgedAt.get(channel);
        const before = judged?.id === key.id ? judged.role : key.role;
        this.judgedAt.set(channel, { id: key.id, role });
        if (channel.private && role !== before) rejudged.push(this.deps.rejudge(channel));
      }
      await Promise.all(rejudged);
    } catch (error) {
      this.deps.logger.error({ err: error }, 'realtime: checking API keys of open channels failed');
    } finally {
      this.running = false;
    }
  }
}
