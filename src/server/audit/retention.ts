// In charge of the security audit log's retention: the nightly job that removes lines older than
// AUDIT_RETENTION_DAYS through internal.purge_audit_events, the only way a line is ever removed
// (migration 0095 refuses every other update or delete, whoever asks).
import type { Queryable } from '../db/pool.js';
import type { ScheduledJob } from '../scheduler.js';

/** Removes the lines older than keepDays; answers how many went. */
export async function purgeAuditEvents(db: Queryable, keepDays: number): Promise<number> {
  const result = await db.query<{ removed: string }>('select internal.purge_audit_events($1) as removed', [
    keepDays,
  ]);
  return Number(result.rows[0]?.removed ?? 0);
}

/** The scheduler's job: at 03:17 each day, away from the digests' top of the hour. */
export function auditRetentionJob(db: Queryable, keepDays: number): ScheduledJob {
  return {
    name: 'audit:retention',
    cron: '17 3 * * *',
    run: async () => ({ removed: await purgeAuditEvents(db, keepDays) }),
  };
}
