// In charge of deleting bytes no row names any more. Deleting or overwriting an object queues its
// old key in internal.storage_deletions in the same transaction (migration 0070), so the bytes go
// only once the deletion is committed, whoever deleted the row (the API, a workspace's deletion, a
// team's own SQL). This drains the queue: after each such request and on a timer, in batches,
// deleting each batch's bytes before its queue rows, so a crash retries rather than forgets.
import type { Pool } from '../db/pool.js';
import { withService } from '../db/transactions.js';
import type { Logger } from '../logger.js';
import type { StorageBackend } from './backends/types.js';

const BATCH = 100;

export interface DeletionQueue {
  /** drains soon (coalesced); never throws */
  kick(): void;
  /** drains now, until the queue is empty; answers the keys deleted */
  drain(): Promise<number>;
  stop(): void;
}

export function createDeletionQueue(
  pool: Pool,
  backend: StorageBackend,
  logger: Logger,
  intervalMs: number,
): DeletionQueue {
  let running: Promise<number> | null = null;
  let again = false;
  let stopped = false;

  const batch = () =>
    withService(pool, async (tx) => {
      // skip locked: several instances drain side by side without deleting a key twice at once.
      const { rows } = await tx.query<{ id: string; key: string }>(
        `select id, key from internal.storage_deletions order by id limit $1 for update skip locked`,
        [BATCH],
      );
      if (rows.length === 0) return 0;
      await backend.delete(rows.map((r) => r.key));
      await tx.query('delete from internal.storage_deletions where id = any ($1::bigint[])', [
        rows.map((r) => r.id),
      ]);
      return rows.length;
    });

  const drain = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const n = await batch();
      total += n;
      if (n < BATCH) return total;
    }
  };

  const run = (): Promise<number> => {
    if (running) {
      again = true;
      return running;
    }
    running = drain()
      .catch((error: unknown) => {
        logger.warn({ err: error }, 'storage: deleting released bytes failed; will retry');
        return 0;
      })
      .finally(() => {
        running = null;
        if (again && !stopped) {
          again = false;
          void run();
        }
      });
    return running;
  };

  const timer = setInterval(() => void run(), intervalMs);
  timer.unref();

  return {
    kick: () => {
      if (!stopped) void run();
    },
    drain: async () => {
      if (running) await running;
      return run();
    },
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
