// In charge of a join's postgres_changes bindings. Database changes are not delivered yet: a join
// that asks for them is still answered as Supabase answers one (each binding echoed in order
// with a stable id, so realtime-js accepts the join and its broadcast and presence work), and the
// channel is then told, by a postgres_changes system error that leaves it open, that no changes
// will come. A later change source replaces `unservedPostgresChanges` behind this interface.
import { createHash } from 'node:crypto';
import { isRecord } from './protocol.js';

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
  /** the system message that follows the reply, if any */
  system: { status: 'ok' | 'error'; message: string } | null;
}

export interface PostgresChanges {
  subscribe(bindings: PostgresBinding[]): PostgresChangesAnswer;
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
  subscribe(bindings) {
    return {
      bindings: bindings.map((binding) => ({ ...binding, id: bindingId(binding) })),
      system:
        bindings.length === 0
          ? null
          : {
              status: 'error',
              message:
                'Unable to subscribe to changes with given parameters: postgres_changes are not delivered by this server yet',
            },
    };
  },
};
