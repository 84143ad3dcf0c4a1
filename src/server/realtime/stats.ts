// In charge of realtime's own figures for the operator: messages in and out and the refusals by
// their reason, counted in this process (the metrics endpoint reads them at each scrape).

export class RealtimeStats {
  /** frames clients sent (heartbeats aside) */
  messagesIn = 0;
  /** frames sent to clients */
  messagesOut = 0;
  /** refusals and shut-down channels, by Supabase's reason (a fixed, small set of words) */
  readonly refusals = new Map<string, number>();

  refused(reason: string): void {
    // The reason's code or its words before any topic name: labels stay few.
    const label = reason.split(':')[0]!.slice(0, 60);
    this.refusals.set(label, (this.refusals.get(label) ?? 0) + 1);
  }
}
