// In charge of rate limits that hold across every instance: fixed-window counters in Postgres,
// one upsert per check, so a limit is the same whichever instance a request lands on.
import type { Queryable } from '../db/pool.js';
import { errors } from './errors.js';

export interface Limit {
  bucket: string;
  max: number;
  windowSeconds: number;
}

/** Counts one hit in each bucket; throws 429 (with Retry-After) when any is over its limit. */
export async function enforceLimits(db: Queryable, limits: Limit[]): Promise<void> {
  if (limits.length === 0) return;
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
  for (const row of result.rows) {
    const limit = limits.find((l) => l.bucket === row.bucket);
    if (limit && row.hits > limit.max) throw errors.rateLimited(Math.max(1, row.retry_after));
  }
  // Old windows are useless; prune them now and then rather than on every request.
  if (Math.random() < 0.01) {
    await db
      .query(`delete from internal.rate_limits where window_start < now() - interval '1 day'`)
      .catch(() => undefined);
  }
}
