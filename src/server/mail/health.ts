// In charge of what readiness says about mail: how it is delivered, what waits unsent and for how
// long, and what failed, so an operator sees a mail outage before users report missing links.
import type { Pool } from '../db/pool.js';

/** Mail waiting longer than this is reported as backed up (and logged once per report). */
export const BACKLOG_WARNING_SECONDS = 600;

export interface MailHealth {
  delivery: 'smtp' | 'outbox';
  /** messages neither sent nor given up on */
  unsent: number;
  /** age of the oldest of them, in seconds (0 when none) */
  oldest_unsent_seconds: number;
  /** messages whose last attempt failed and that will be retried */
  retrying: number;
  /** messages given up on after every attempt failed, in the last 24 hours */
  failed_last_day: number;
  /** the latest delivery error, when a message is waiting on a retry */
  last_error: string | null;
  /** true when mail waits longer than BACKLOG_WARNING_SECONDS or a message was given up on */
  degraded: boolean;
}

export async function mailHealth(pool: Pool, delivery: 'smtp' | 'outbox'): Promise<MailHealth> {
  const { rows } = await pool.query<Omit<MailHealth, 'delivery' | 'degraded'>>(
    `select count(*) filter (where sent_at is null and failed_at is null)::int as unsent,
            coalesce(extract(epoch from now() - min(created_at)
              filter (where sent_at is null and failed_at is null))::int, 0) as oldest_unsent_seconds,
            count(*) filter (where sent_at is null and failed_at is null and attempts > 0)::int as retrying,
            count(*) filter (where failed_at > now() - interval '1 day')::int as failed_last_day,
            (array_agg(last_error order by available_at desc)
              filter (where sent_at is null and failed_at is null and last_error is not null))[1] as last_error
     from internal.outbox
     where sent_at is null or failed_at > now() - interval '1 day'`,
  );
  const stats = rows[0]!;
  // Outbox-only delivery is someone else's to send: its backlog is reported, not judged.
  const degraded =
    delivery === 'smtp' &&
    (stats.oldest_unsent_seconds > BACKLOG_WARNING_SECONDS || stats.failed_last_day > 0);
  return { delivery, ...stats, degraded };
}
