// In charge of sharing a scarce resource (database connections) fairly between callers: at most
// `perCaller` requests of one caller run at once, at most `capacity` in all, and when a slot frees
// the waiting callers take turns (round robin) instead of the busiest caller going first. State is
// per process on purpose: it decides who waits, never whether something is allowed.
import { HttpError } from './errors.js';

export interface FairGateOptions {
  /** requests running at once, over all callers */
  capacity: number;
  /** requests one caller runs at once */
  perCaller: number;
  /** requests one caller may have waiting; beyond that it is refused at once */
  maxWaitingPerCaller: number;
  /** how long a request may wait for its turn */
  maxWaitMs: number;
}

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
}

interface CallerState {
  running: number;
  waiting: Waiter[];
}

export class FairGate {
  private running = 0;
  private readonly callers = new Map<string, CallerState>();
  /** callers with someone waiting, in the order they get their next turn */
  private readonly turns: string[] = [];

  constructor(private readonly options: FairGateOptions) {}

  /** Runs fn when `caller` has a turn; refuses with 429 or 504 when it cannot get one in time. */
  async run<T>(caller: string, fn: () => Promise<T>): Promise<T> {
    await this.enter(caller);
    try {
      return await fn();
    } finally {
      this.leave(caller);
    }
  }

  /** How many requests run and wait now (for tests and diagnostics). */
  stats(): { running: number; waiting: number } {
    let waiting = 0;
    for (const state of this.callers.values()) waiting += state.waiting.length;
    return { running: this.running, waiting };
  }

  private state(caller: string): CallerState {
    let state = this.callers.get(caller);
    if (!state) this.callers.set(caller, (state = { running: 0, waiting: [] }));
    return state;
  }

  private canStart(state: CallerState): boolean {
    return this.running < this.options.capacity && state.running < this.options.perCaller;
  }

  private enter(caller: string): Promise<void> {
    const state = this.state(caller);
    if (state.waiting.length === 0 && this.canStart(state)) {
      this.running += 1;
      state.running += 1;
      return Promise.resolve();
    }
    if (state.waiting.length >= this.options.maxWaitingPerCaller) {
      this.forget(caller, state);
      return Promise.reject(
        new HttpError(429, 'Too many requests at once from this caller; retry shortly', {
          code: 'TNTRY429',
          details: `DATA_API_CALLER_CONCURRENCY lets ${this.options.perCaller} requests run at once per caller`,
          headers: { 'Retry-After': '1' },
        }),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          resolve();
        },
        timer: setTimeout(() => {
          const index = state.waiting.indexOf(waiter);
          if (index >= 0) state.waiting.splice(index, 1);
          if (state.waiting.length === 0) this.dropTurn(caller);
          this.forget(caller, state);
          reject(
            new HttpError(504, 'Timed out acquiring connection from connection pool.', {
              code: 'PGRST003',
              headers: { 'Retry-After': '1' },
            }),
          );
        }, this.options.maxWaitMs),
      };
      state.waiting.push(waiter);
      if (!this.turns.includes(caller)) this.turns.push(caller);
    });
  }

  private leave(caller: string): void {
    const state = this.state(caller);
    this.running -= 1;
    state.running -= 1;
    this.dispatch();
    this.forget(caller, this.state(caller));
  }

  /** Starts waiting requests while there is room, one caller's turn at a time. */
  private dispatch(): void {
    let skipped = 0;
    while (this.running < this.options.capacity && this.turns.length > 0 && skipped < this.turns.length) {
      const caller = this.turns.shift()!;
      const state = this.state(caller);
      if (state.running >= this.options.perCaller) {
        // This caller is at its own limit: it keeps its place for when one of its requests ends.
        this.turns.push(caller);
        skipped += 1;
        continue;
      }
      skipped = 0;
      const waiter = state.waiting.shift()!;
      this.running += 1;
      state.running += 1;
      if (state.waiting.length > 0) this.turns.push(caller);
      waiter.start();
    }
  }

  private dropTurn(caller: string): void {
    const index = this.turns.indexOf(caller);
    if (index >= 0) this.turns.splice(index, 1);
  }

  private forget(caller: string, state: CallerState): void {
    if (state.running === 0 && state.waiting.length === 0) this.callers.delete(caller);
  }
}
