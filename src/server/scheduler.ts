// In charge of the in-process scheduler: croner fires each job on its cron expression (UTC unless
// configured), and a row per (job, slot) in internal.scheduler_runs makes sure only one instance
// runs a slot when several instances are up.
import { hostname } from 'node:os';
import { Cron } from 'croner';
import type { Pool } from './db/pool.js';
import type { Logger } from './logger.js';

export interface ScheduledJob {
  name: string;
  /** five-field cron expression */
  cron: string;
  run(): Promise<unknown>;
}

export interface SchedulerOptions {
  pool: Pool;
  logger: Logger;
  timezone: string;
  jobs: ScheduledJob[];
  instance?: string;
}

/** Claims the slot; true only for the one instance that gets to run it. */
export async function claimSlot(pool: Pool, job: string, slot: Date, instance: string): Promise<boolean> {
  const result = await pool.query(
    `insert into internal.scheduler_runs (job, slot, instance) values ($1, $2, $3)
     on conflict (job, slot) do nothing`,
    [job, slot, instance],
  );
  return (result.rowCount ?? 0) > 0;
}

/** Runs `job` for `slot` if this instance claims it; records the outcome. */
export async function runSlot(
  pool: Pool,
  logger: Logger,
  job: ScheduledJob,
  slot: Date,
  instance: string,
): Promise<'ran' | 'skipped' | 'failed'> {
  if (!(await claimSlot(pool, job.name, slot, instance))) return 'skipped';
  try {
    const result = await job.run();
    await pool.query(
      `update internal.scheduler_runs set finished_at = now(), result = $3 where job = $1 and slot = $2`,
      [job.name, slot, JSON.stringify(result ?? null)],
    );
    logger.info({ job: job.name, slot, result }, 'scheduled job finished');
    return 'ran';
  } catch (error) {
    await pool
      .query(
        `update internal.scheduler_runs set finished_at = now(), error = $3 where job = $1 and slot = $2`,
        [job.name, slot, String((error as Error).message).slice(0, 2000)],
      )
      .catch(() => undefined);
    logger.error({ err: error, job: job.name, slot }, 'scheduled job failed');
    return 'failed';
  }
}

export class Scheduler {
  private readonly crons: Cron[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(private readonly options: SchedulerOptions) {}

  start(): void {
    const instance = this.options.instance ?? `${hostname()}:${process.pid}`;
    for (const job of this.options.jobs) {
      const cron = new Cron(
        job.cron,
        { timezone: this.options.timezone, protect: true },
        async (self: Cron) => {
          // The slot is the scheduled time, not the moment the timer fired, so all instances agree.
          const slot = self.currentRun() ?? new Date();
          slot.setMilliseconds(0);
          const run = runSlot(this.options.pool, this.options.logger, job, slot, instance);
          this.inFlight.add(run);
          await run.finally(() => this.inFlight.delete(run));
        },
      );
      this.crons.push(cron);
      this.options.logger.info({ job: job.name, cron: job.cron, next: cron.nextRun() }, 'scheduled');
    }
  }

  /** Stops firing and waits for running jobs to finish. */
  async stop(): Promise<void> {
    for (const cron of this.crons) cron.stop();
    await Promise.allSettled([...this.inFlight]);
  }
}
