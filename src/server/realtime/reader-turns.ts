// In charge of a reader's turns (the changes feed's and the stored broadcasts'): work on one reader
// runs one piece at a time in the order it was asked for, so a replay sits exactly between two
// reads, and the next read is set for the earliest moment anyone asked for it.
export class ReaderTurns {
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;
  private stopped = false;

  /** @param read one read of the reader, run in its turn whenever a scheduled moment comes */
  constructor(private readonly read: () => Promise<void>) {}

  /** Runs `work` once everything asked for before it has run; its failure is the caller's alone. */
  run(work: () => Promise<void>): Promise<void> {
    const next = this.chain.then(work);
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** A read in `ms`, unless one is already due as soon or sooner. */
  schedule(ms: number): void {
    if (this.stopped) return;
    const at = Date.now() + ms;
    if (this.timer && this.timerAt <= at) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      void this.run(this.read);
    }, ms);
    // A reader never keeps the process alive on its own.
    this.timer.unref();
  }

  /** No more reads are scheduled; resolves once the work already asked for has run. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.chain;
  }
}
