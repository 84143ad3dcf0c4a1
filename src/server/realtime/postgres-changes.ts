// In charge of a join's postgres_changes bindings as the channel sees them: reading them from the
// join, their stable ids, and the seam to what delivers changes (changes.ts). A join is answered
// as Supabase answers one: each binding echoed in order with its id (realtime-js refuses a reply
// that differs), then system messages (ok "Subscribed to PostgreSQL", or an error that leaves
// the channel open). `unservedPostgresChanges` answers when nothing delivers changes.
import { createHash } from 'node:crypto';
import { isRecord } from './protocol.js';
import type { Channel } from './topics.js';

export interface PostgresBinding {
  event: string;
  schema: string;
  table?: string;
  filter?: string;
  [param: string]: unknown;
}

export interface PostgresChangesAnswer {
  /** the join reply's postgres_changes: each binding as sent, with its id */
  bindings: (PostgresBinding & { id: number })[];
  /** the system messages that follow the reply, in order */
  system: { status: 'ok' | 'error'; message: string }[];
  /** called once the reply and system messages are sent: changes may flow from then on */
  start?: () => void;
}

export interface PostgresChanges {
  subscribe(channel: Channel, bindings: PostgresBinding[]): Promise<PostgresChangesAnswer>;
  /** the channel has left (or its socket closed); called for every channel, subscribed or not */
  unsubscribe(channel: Channel): void;
  /** a table's workspace column (null: none), undefined while the table is not known here */
  scopeColumn?(schema: string, table: string): string | null | undefined;
}

/** Reads the join's config.postgres_changes; null when it is not a list of bindings. */
export function parseBindings(value: unknown): PostgresBinding[] | null {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return null;
  const bindings: PostgresBinding[] = [];
  for (const item of value) {
    if (!isRecord(item) || typeof item.event !== 'string' || typeof item.schema !== 'string') return null;
    if (item.table !== undefined && typeof item.table !== 'string') return null;
    if (item.filter !== undefined && typeof item.filter !== 'string') return null;
    bindings.push(item as PostgresBinding);
  }
  return bindings;
}

/** A stable positive 32-bit id for a binding's parameters, like Supabase's phash2 of them. */
export function bindingId(binding: PostgresBinding): number {
  const canonical = JSON.stringify(
    Object.keys(binding)
      .sort()
      .map((key) => [key, binding[key]]),
  );
  return createHash('sha256').update(canonical).digest().readUInt32BE(0) & 0x7fffffff;
}

export const unservedPostgresChanges: PostgresChanges = {
  subscribe(_channel, bindings) {
    return Promise.resolve({
      bindings: bindings.map((binding) => ({ ...binding, id: bindingId(binding) })),
      system:
        bindings.length === 0
          ? []
          : [
              {
                status: 'error',
                message:
                  'Unable to subscribe to changes with given parameters: postgres_changes are not delivered by this server',
              },
            ],
    });
  },
  unsubscribe() {},
};
