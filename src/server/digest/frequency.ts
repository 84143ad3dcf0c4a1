// In charge of digest frequencies and their periods: a daily digest covers one UTC day, a weekly
// one an ISO week starting Monday. The period start identifies "this period" in the ledger.
export const FREQUENCIES = ['daily', 'weekly'] as const;
export type Frequency = (typeof FREQUENCIES)[number];

export const SCHEDULES: Record<Frequency, string> = {
  daily: '0 8 * * *',
  weekly: '0 8 * * 1',
};

/** Start of the period that contains `now`, in UTC. */
export function periodStart(frequency: Frequency, now: Date): Date {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  if (frequency === 'weekly') {
    const daysSinceMonday = (start.getUTCDay() + 6) % 7;
    start.setUTCDate(start.getUTCDate() - daysSinceMonday);
  }
  return start;
}

/** Length of one period, for "at most one period back". */
export function periodLengthMs(frequency: Frequency): number {
  return (frequency === 'daily' ? 1 : 7) * 24 * 3600 * 1000;
}
