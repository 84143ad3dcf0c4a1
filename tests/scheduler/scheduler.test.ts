// The scheduler's one-instance guard: with several instances firing the same job, each slot
// runs exactly once.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { createLogger } from '../../src/server/logger.js';
import { Scheduler, runSlot, type ScheduledJob } from '../../src/server/scheduler.js';
import { createTestDatabase } from '../support/server.js';

let pool: Pool;
const logger = createLogger('silent');
beforeAll(async () => {
  pool = createPool(await createTestDatabase(), { max: 6 });
});
afterAll(async () => pool?.end());

test('concurrent claims of one slot: one instance runs it, the others skip', async () => {
  let runs = 0;
  const job: ScheduledJob = { name: 'claim-test', cron: '0 8 * * *', run: async () => ++runs };
  const slot = new Date('2026-11-23T08:00:00Z');
  const outcomes = await Promise.all(
    ['a', 'b', 'c', 'd'].map((instance) => runSlot(pool, logger, job, slot, instance)),
  );
  expect(outcomes.filter((o) => o === 'ran')).toHaveLength(1);
  expect(outcomes.filter((o) => o === 'skipped')).toHaveLength(3);
  expect(runs).toBe(1);
  const row = await pool.query('select result, finished_at from internal.scheduler_runs where job = $1', [
    job.name,
  ]);
  expect(row.rows[0].result).toBe(1);
  expect(row.rows[0].finished_at).not.toBeNull();
});

test('a failing job is recorded with its error', async () => {
  const job: ScheduledJob = {
    name: 'failing',
    cron: '0 8 * * *',
    run: async () => Promise.reject(new Error('smtp down')),
  };
  expect(await runSlot(pool, logger, job, new Date('2026-11-23T08:00:00Z'), 'a')).toBe('failed');
  const row = await pool.query('select error from internal.scheduler_runs where job = $1', ['failing']);
  expect(row.rows[0].error).toBe('smtp down');
});

test('three schedulers firing every second run each slot once', async () => {
  const ranSlots: string[] = [];
  const job = (): ScheduledJob => ({
    name: 'every-second',
    cron: '* * * * * *',
    run: async () => {
      ranSlots.push(new Date().toISOString());
      return null;
    },
  });
  const schedulers = ['x', 'y', 'z'].map(
    (instance) => new Scheduler({ pool, logger, timezone: 'UTC', jobs: [job()], instance }),
  );
  schedulers.forEach((s) => s.start());
  await new Promise((resolve) => setTimeout(resolve, 3200));
  await Promise.all(schedulers.map((s) => s.stop()));
  const slots = await pool.query<{ n: number; instances: number }>(
    `select count(*)::int as n, count(distinct instance)::int as instances from internal.scheduler_runs where job = 'every-second'`,
  );
  expect(slots.rows[0]!.n).toBeGreaterThanOrEqual(2);
  expect(ranSlots).toHaveLength(slots.rows[0]!.n);
});
