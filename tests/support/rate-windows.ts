// Where the database's clock stands in a rate-limit window (windows are aligned to the epoch, as
// internal.rate_limits stores them), for tests whose expected figures depend on it.
import type { Queryable } from '../../src/server/db/pool.js';

/** Seconds the database's clock is into the current window of `window` seconds. */
export async function secondsIntoWindow(db: Queryable, window: number): Promise<number> {
  const r = await db.query<{ s: number }>(
    `select (extract(epoch from now()) - floor(extract(epoch from now()) / $1) * $1)::float8 as s`,
    [window],
  );
  return Number(r.rows[0]!.s);
}

/** The same, after waiting for the next window when fewer than `margin` seconds are left in this one. */
export async function secondsIntoWindowAwayFromEnd(
  db: Queryable,
  window: number,
  margin: number,
): Promise<number> {
  const elapsed = await secondsIntoWindow(db, window);
  if (window - elapsed >= margin) return elapsed;
  await new Promise((resolve) => setTimeout(resolve, (window - elapsed + 1) * 1000));
  return secondsIntoWindow(db, window);
}
