// In charge of rate limits that hold across every instance: sliding-window counters in Postgres
// (internal.rate_limit_* of migration 0038), so a limit is the same whichever instance a request
// lands on, and no client gets twice its allowance by straddling two windows.
import type { Queryable } from '../db/pool.js';
import { errors } from './errors.js';

export interface Limit {
  bucket: string;
  max: number;
  windowSeconds: number;
}

/**
 * Counts one hit in each bucket that has room; throws 429 (with Retry-After) when any has none,
 * or the error `refusal` makes for the seconds to wait. A refused hit is not counted.
 */
export async function enforceLimits(
  db: Queryable,
  limits: Limit[],
  refusal: (retryAfterSeconds: number) => Error = errors.rateLimited,
): Promise<void> {
  if (limits.length === 0) return;
  const result = await db.query<{ wait: number | null }>(
    `select max(internal.rate_limit_admit(i.bucket, i.window_seconds, i.max)) as wait
     from unnest($1::text[], $2::int[], $3::int[]) as i(bucket, window_seconds, max)`,
    columns(limits),
  );
  // Old windows are useless; prune them now and then rather than on every request.
  if (Math.random() < 0.01) {
    await db
      .query(`delete from internal.rate_limits where window_start < now() - interval '1 day'`)
      .catch(() => undefined);
  }
  const wait = result.rows[0]?.wait;
  if (wait !== null && wait !== undefined) throw refusal(Math.max(1, wait));
}

/**
 * Seconds until every bucket has room again when one is already full (nothing is counted),
 * 0 when all have room: for limits on failures, checked first and counted only on failure.
 */
export async function limitsReached(db: Queryable, limits: Limit[]): Promise<number> {
  if (limits.length === 0) return 0;
  const result = await db.query<{ wait: number | null }>(
    `select max(internal.rate_limit_room(i.bucket, i.window_seconds, i.max)) as wait
     from unnest($1::text[], $2::int[], $3::int[]) as i(bucket, window_seconds, max)`,
    columns(limits),
  );
  const wait = result.rows[0]?.wait;
  return wait === null || wait === undefined ? 0 : Math.max(1, wait);
}

/** Counts one hit in each bucket, whatever the count: a failure that has already happened. */
export async function countHits(db: Queryable, limits: Limit[]): Promise<void> {
  if (limits.length === 0) return;
  await db.query(
    `select internal.rate_limit_count(i.bucket, i.window_seconds)
     from unnest($1::text[], $2::int[]) as i(bucket, window_seconds)`,
    columns(limits).slice(0, 2),
  );
}

function columns(limits: Limit[]): [string[], number[], number[]] {
  return [limits.map((l) => l.bucket), limits.map((l) => l.windowSeconds), limits.map((l) => l.max)];
}
