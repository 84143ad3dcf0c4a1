// In charge of rate limits that hold across every instance: fixed-window counters in Postgres,
// one upsert per check, so a limit is the same whichever instance a request lands on.
import type { Queryable } from '../db/pool.js';
import { errors } from './errors.js';

export interface Limit {
  bucket: string;
  max: number;
  windowSeconds: number;
}

/**
 * Counts one hit in each bucket; throws 429 (with Retry-After) when any is over its limit, or
 * the error `refusal` makes for the seconds to wait.
 */
export async function enforceLimits(
  db: Queryable,
  limits: Limit[],
  refusal: (retryAfterSeconds: number) => Error = errors.rateLimited,
): Promise<void> {
  for (const row of await countHits(db, limits)) {
    const limit = limits.find((l) => l.bucket === row.bucket);
    if (limit && row.hits > limit.max) throw refusal(Math.max(1, row.retry_after));
  }
}

/**
 * Seconds until every bucket has room again when one is already full (nothing is counted),
 * 0 when all have room: for limits on failures, checked first and counted only on failure.
 */
export async function limitsReached(db: Queryable, limits: Limit[]): Promise<number> {
  if (limits.length === 0) return 0;
  const result = await db.query<{ wait: number | null }>(
    `select max(ceil(extract(epoch from r.window_start) + i.window_seconds - extract(epoch from now())))::int as wait
     from unnest($1::text[], $2::int[], $3::int[]) as i(bucket, window_seconds, max)
     join internal.rate_limits r on r.bucket = i.bucket
       and r.window_start = to_timestamp(floor(extract(epoch from now()) / i.window_seconds) * i.window_seconds)
     where r.hits >= i.max`,
    [limits.map((l) => l.bucket), limits.map((l) => l.windowSeconds), limits.map((l) => l.max)],
  );
  const wait = result.rows[0]?.wait;
  return wait === null || wait === undefined ? 0 : Math.max(1, wait);
}

/** Counts one hit in each bucket and returns the counts. */
export async function countHits(
  db: Queryable,
  limits: Limit[],
): Promise<{ bucket: string; hits: number; retry_after: number }[]> {
  if (limits.length === 0) return [];
  const result = await db.query<{ bucket: string; hits: number; retry_after: number }>(
    `with input as (
       select * from unnest($1::text[], $2::int[]) as t(bucket, window_seconds)
     ), upserted as (
       insert into internal.rate_limits as r (bucket, window_start, hits)
       select bucket, to_timestamp(floor(extract(epoch from now()) / window_seconds) * window_seconds), 1
       from input
       on conflict (bucket, window_start) do update set hits = r.hits + 1
       returning r.bucket, r.hits, r.window_start
     )
     select u.bucket, u.hits,
       ceil(extract(epoch from u.window_start) + i.window_seconds - extract(epoch from now()))::int as retry_after
     from upserted u join input i using (bucket)`,
    [limits.map((l) => l.bucket), limits.map((l) => l.windowSeconds)],
  );
  // Old windows are useless; prune them now and then rather than on every request.
  if (Math.random() < 0.01) {
    await db
      .query(`delete from internal.rate_limits where window_start < now() - interval '1 day'`)
      .catch(() => undefined);
  }
  return result.rows;
}
