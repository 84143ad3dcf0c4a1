// In charge of realtime's bounds that span messages: sockets held per client address, and how
// many messages one socket may send per second. Each is a counter in this process: a socket lives
// on one instance, so its own instance is the one to bound it.

/** Open sockets per address group; `acquire` is false when the address already holds its share. */
export class AddressCounter {
  private readonly held = new Map<string, number>();

  constructor(private readonly max: number) {}

  acquire(address: string): boolean {
    const count = this.held.get(address) ?? 0;
    if (count >= this.max) return false;
    this.held.set(address, count + 1);
    return true;
  }

  release(address: string): void {
    const left = (this.held.get(address) ?? 1) - 1;
    if (left > 0) this.held.set(address, left);
    else this.held.delete(address);
  }
}

/**
 * Messages in the current one-second window. A fixed window is enough here: what it guards is a
 * socket flooding the process, and a burst of twice the rate across a window's edge is harmless.
 */
export class MessageRate {
  private windowStart = 0;
  private count = 0;

  constructor(private readonly perSecond: number) {}

  /** Counts one message; false once the socket is over its rate for this second. */
  take(now = Date.now()): boolean {
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.count = 0;
    }
    this.count += 1;
    return this.count <= this.perSecond;
  }
}
