// Rate limits count over a sliding window: the previous window's hits still weigh by the share
// of it that lies within the last window_seconds, so nobody gets twice a limit by spending it at
// the end of one window and again at the start of the next. Refused hits are not counted, and
// Retry-After names the moment one more hit has room.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { isHttpError } from '../../src/server/http/errors.js';
import { countHits, enforceLimits, limitsReached, type Limit } from '../../src/server/identity/rate-limit.js';
import { secondsIntoWindowAwayFromEnd } from '../support/rate-windows.js';
import { createTestDatabase } from '../support/server.js';

const WINDOW = 3600;
let pool: Pool;

beforeAll(async () => {
  pool = createPool(await createTestDatabase(), { max: 8 });
});
afterAll(async () => pool?.end());

const bucket = () => `test:${randomBytes(6).toString('hex')}`;

/** Seconds into the current window, clear of its last 30 seconds. */
const elapsedInWindow = () => secondsIntoWindowAwayFromEnd(pool, WINDOW, 30);

/** Stores `hits` in the bucket's previous window, as if they were counted there. */
async function previousWindowHits(name: string, hits: number): Promise<void> {
  await pool.query(
    `insert into internal.rate_limits (bucket, window_start, hits)
     values ($1, to_timestamp(floor(extract(epoch from now()) / $2) * $2 - $2), $3)`,
    [name, WINDOW, hits],
  );
}

async function currentHits(name: string): Promise<number> {
  const r = await pool.query<{ hits: number }>(
    `select hits from internal.rate_limits
     where bucket = $1 and window_start = to_timestamp(floor(extract(epoch from now()) / $2) * $2)`,
    [name, WINDOW],
  );
  return r.rows[0]?.hits ?? 0;
}

/** Hits until the first refusal; returns how many were let through and the refusal's wait. */
async function hitUntilRefused(limit: Limit): Promise<{ admitted: number; wait: number }> {
  for (let admitted = 0; admitted <= limit.max; admitted++) {
    try {
      await enforceLimits(pool, [limit]);
    } catch (error) {
      if (!isHttpError(error) || error.status !== 429) throw error;
      return { admitted, wait: Number(error.headers?.['Retry-After']) };
    }
  }
  throw new Error(`more than ${limit.max} hits were let through`);
}

test('a previous window spent in full keeps the start of the next one closed', async () => {
  const name = bucket();
  const max = 100;
  await previousWindowHits(name, max);
  const before = await elapsedInWindow();
  const { admitted, wait } = await hitUntilRefused({ bucket: name, max, windowSeconds: WINDOW });
  const after = await elapsedInWindow();
  // The previous window weighs max * (1 - elapsed / WINDOW); what is left of max is let through.
  expect(admitted).toBeGreaterThanOrEqual(Math.floor((max * before) / WINDOW));
  expect(admitted).toBeLessThanOrEqual(Math.floor((max * after) / WINDOW) + 1);
  expect(admitted).toBeLessThan(max);
  // One more has room once the previous window's weight has faded by one hit.
  const expected = ((admitted + 1) / max) * WINDOW - after;
  expect(wait).toBeGreaterThanOrEqual(Math.max(1, Math.floor(expected)));
  expect(wait).toBeLessThanOrEqual(Math.ceil(expected + (after - before)) + 1);
  // The refusal was not counted.
  expect(await currentHits(name)).toBe(admitted);
});

test('a full window with an empty previous one waits into the next window', async () => {
  const name = bucket();
  const { admitted, wait } = await hitUntilRefused({ bucket: name, max: 4, windowSeconds: WINDOW });
  expect(admitted).toBe(4);
  const elapsed = await elapsedInWindow();
  // In the next window these 4 hits weigh 4 * (1 - f); one more fits once that is at most 3.
  const expected = WINDOW - elapsed + WINDOW / 4;
  expect(Math.abs(wait - expected)).toBeLessThanOrEqual(2);
  expect(await currentHits(name)).toBe(4);
});

test('the wait is the first moment the estimate has room again', async () => {
  const wait = async (previous: number, current: number, max: number, window: number, elapsed: number) =>
    Number(
      (
        await pool.query(`select internal.rate_limit_wait($1, $2, $3, $4, $5) as w`, [
          previous,
          current,
          max,
          window,
          elapsed,
        ])
      ).rows[0].w,
    );
  // 10 previous hits weigh 7 at 30 s of 100; with 3 current, one more fits when they weigh 6.
  expect(await wait(10, 3, 10, 100, 30)).toBe(10);
  // A full current window: 70 s to its end, then 10 s until its 10 hits weigh 9.
  expect(await wait(0, 10, 10, 100, 30)).toBe(80);
  expect(await wait(10, 10, 10, 100, 30)).toBe(80);
  // A limit of one waits for the whole next window.
  expect(await wait(0, 1, 1, 100, 99.5)).toBe(101);
});

test('concurrent hits on one bucket never pass the limit together', async () => {
  const name = bucket();
  const outcomes = await Promise.allSettled(
    Array.from({ length: 24 }, () => enforceLimits(pool, [{ bucket: name, max: 5, windowSeconds: WINDOW }])),
  );
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(5);
  expect(await currentHits(name)).toBe(5);
});

test('limits on failures: checked without counting, counted whatever the count', async () => {
  const name = bucket();
  const limit = [{ bucket: name, max: 3, windowSeconds: WINDOW }];
  expect(await limitsReached(pool, limit)).toBe(0);
  expect(await currentHits(name)).toBe(0);
  for (let i = 0; i < 4; i++) await countHits(pool, limit);
  expect(await currentHits(name)).toBe(4);
  expect(await limitsReached(pool, limit)).toBeGreaterThan(0);

  // Failures of the previous window still weigh.
  const earlier = bucket();
  await previousWindowHits(earlier, 3);
  const elapsed = await elapsedInWindow();
  const wait = await limitsReached(pool, [{ bucket: earlier, max: 3, windowSeconds: WINDOW }]);
  // 3 * (1 - f) + 1 <= 3 once f >= 1/3 of the window.
  expect(Math.abs(wait - Math.max(0, WINDOW / 3 - elapsed))).toBeLessThanOrEqual(2);
});
