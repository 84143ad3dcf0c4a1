// In charge of sharing a scarce resource (database connections) fairly between callers: at most
// `capacity` requests run in all, and when a slot frees the waiting callers take turns (round
// robin) instead of the busiest caller going first. A caller runs `perCaller` requests at once;
// one whose requests have proven fast may use spare capacity beyond that (a busy single-user back
// end is not throttled), but never the last `perCaller` slots. One whose requests are slow (now or
// recently) runs one at a time while other callers are using the gate: slow statements hold the
// database's cores, and a few of them at once crowd out everyone's short requests. Callers may also
// share an address: all of an address's callers together run at most `perAddress` requests, so
// many accounts signed in from one place cannot hold every slot between them. State is per
// process on purpose: it decides who waits, never whether something is allowed. A waiting request
// whose client has gone (its signal aborted) leaves the queue at once: a browser that navigated
// away or closed its tab must not hold a place, and then a slot, for a page nobody will read.
import { HttpError } from './errors.js';

export interface FairGateOptions {
  /** requests running at once, over all callers */
  capacity: number;
  /** requests one caller runs at once */
  perCaller: number;
  /** requests all the callers of one address run at once (unbounded when absent) */
  perAddress?: number;
  /** the setting that sets perCaller, named in the refusal when a caller asks too much at once */
  perCallerSetting?: string;
  /** requests one caller may have waiting; beyond that it is refused at once */
  maxWaitingPerCaller: number;
  /** how long a request may wait for its turn */
  maxWaitMs: number;
  /** a request running this long makes its caller slow (held to perCaller) */
  slowMs?: number;
  /** fast requests a caller completes before it may go beyond perCaller */
  warmup?: number;
  /** half-life of a slow request's mark on its caller */
  slowHalfLifeMs?: number;
  /** how recently another caller must have used the gate for a slow caller to be held to one */
  othersRecentMs?: number;
}

const DEFAULT_SLOW_MS = 100;
const DEFAULT_WARMUP = 8;
const DEFAULT_SLOW_HALF_LIFE_MS = 30_000;
const DEFAULT_OTHERS_RECENT_MS = 5_000;
/** callers remembered at most (oldest forgotten first) */
const MAX_REMEMBERED = 10_000;

/** What the gate remembers of a caller between its requests. */
interface History {
  /** fast requests completed (capped at the warm-up count) */
  fast: number;
  /** the slowest recent request's duration, decaying with slowHalfLifeMs */
  slowness: number;
  /** when slowness was last updated */
  at: number;
}

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
  address: string | null;
}

/**
 * Why a request left the queue without running: its client went away while it waited. 499 is the
 * status proxies log for a client that closed its request; nobody is left to receive it.
 */
export class ClientGoneError extends HttpError {
  constructor() {
    super(499, 'The client went away while its request waited for a turn', { code: 'client_gone' });
  }
}

interface CallerState {
  running: number;
  waiting: Waiter[];
  /** start times of the running requests */
  started: number[];
}

export class FairGate {
  private running = 0;
  private readonly callers = new Map<string, CallerState>();
  /** requests running per address (only addresses with one running) */
  private readonly addresses = new Map<string, number>();
  /** callers with someone waiting, in the order they get their next turn */
  private readonly turns: string[] = [];
  private readonly history = new Map<string, History>();
  /** the two callers that most recently started a request, most recent first, with when */
  private readonly recent: [caller: string, at: number][] = [];
  private readonly slowMs: number;
  private readonly warmup: number;
  private readonly halfLife: number;
  private readonly othersRecentMs: number;

  constructor(private readonly options: FairGateOptions) {
    this.slowMs = options.slowMs ?? DEFAULT_SLOW_MS;
    this.warmup = options.warmup ?? DEFAULT_WARMUP;
    this.halfLife = options.slowHalfLifeMs ?? DEFAULT_SLOW_HALF_LIFE_MS;
    this.othersRecentMs = options.othersRecentMs ?? DEFAULT_OTHERS_RECENT_MS;
  }

  /**
   * Runs fn when `caller` has a turn and its `address` is within its share; refuses with 429 or
   * 504 when it cannot get one in time. Without an address only the caller's own share applies.
   * When `gone` aborts while the request waits, it leaves the queue with a ClientGoneError.
   */
  async run<T>(
    caller: string,
    fn: () => Promise<T>,
    address: string | null = null,
    gone?: AbortSignal,
  ): Promise<T> {
    await this.enter(caller, address, gone);
    const started = performance.now();
    this.noteStart(caller, started);
    const state = this.state(caller);
    state.started.push(started);
    try {
      return await fn();
    } finally {
      state.started.splice(state.started.indexOf(started), 1);
      this.record(caller, performance.now() - started);
      this.leave(caller, address);
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
    if (!state) this.callers.set(caller, (state = { running: 0, waiting: [], started: [] }));
    return state;
  }

  private canStart(caller: string, state: CallerState, address: string | null): boolean {
    const { capacity, perCaller, perAddress } = this.options;
    if (this.running >= capacity) return false;
    // Strict, whatever its callers have proven: the address's share is what others are owed.
    if (address !== null && perAddress !== undefined && (this.addresses.get(address) ?? 0) >= perAddress) {
      return false;
    }
    // Measured on two cores: four self-embeds at once cut a neighbour's reads to 2% of their
    // rate; one at a time left them whole. Alone, a slow caller keeps its whole share.
    if (state.running >= 1 && this.isSlow(caller, state) && this.othersActive(caller)) return false;
    if (state.running < perCaller) return true;
    // Beyond its own share only into spare capacity, and only while it has proven fast.
    return this.running < capacity - perCaller && this.isFast(caller, state);
  }

  /** Not slow, and past its warm-up of fast requests. */
  private isFast(caller: string, state: CallerState): boolean {
    const seen = this.history.get(caller);
    return !!seen && seen.fast >= this.warmup && !this.isSlow(caller, state);
  }

  /** A request of its own runs slow now, or one did recently (the mark not yet decayed). */
  private isSlow(caller: string, state: CallerState): boolean {
    const now = performance.now();
    if (state.started.some((at) => now - at >= this.slowMs)) return true;
    const seen = this.history.get(caller);
    return !!seen && this.decayed(seen, now) >= this.slowMs;
  }

  /** Whether another caller has requests running or waiting, or started one recently. */
  private othersActive(caller: string): boolean {
    if (this.running > (this.callers.get(caller)?.running ?? 0)) return true;
    if (this.turns.some((c) => c !== caller)) return true;
    const now = performance.now();
    return this.recent.some(([c, at]) => c !== caller && now - at < this.othersRecentMs);
  }

  private noteStart(caller: string, at: number): void {
    const index = this.recent.findIndex(([c]) => c === caller);
    if (index >= 0) this.recent.splice(index, 1);
    this.recent.unshift([caller, at]);
    if (this.recent.length > 2) this.recent.pop();
  }

  private decayed(seen: History, now: number): number {
    return seen.slowness * 0.5 ** ((now - seen.at) / this.halfLife);
  }

  private record(caller: string, durationMs: number): void {
    const now = performance.now();
    const seen = this.history.get(caller) ?? { fast: 0, slowness: 0, at: now };
    this.history.delete(caller); // re-inserted last: the map's order is least recently seen first
    const slowness = Math.max(this.decayed(seen, now), durationMs >= this.slowMs ? durationMs : 0);
    const fast = durationMs < this.slowMs ? Math.min(this.warmup, seen.fast + 1) : seen.fast;
    this.history.set(caller, { fast, slowness, at: now });
    if (this.history.size > MAX_REMEMBERED) this.history.delete(this.history.keys().next().value!);
  }

  private enter(caller: string, address: string | null, gone?: AbortSignal): Promise<void> {
    const state = this.state(caller);
    if (state.waiting.length === 0 && this.canStart(caller, state, address)) {
      this.occupy(state, address);
      return Promise.resolve();
    }
    // Only a place in the queue is refused to a client already gone: a free slot is taken anyway,
    // since work the request started (a step after its last byte arrived) may need finishing.
    if (gone?.aborted) return Promise.reject(new ClientGoneError());
    if (state.waiting.length >= this.options.maxWaitingPerCaller) {
      this.forget(caller, state);
      return Promise.reject(
        new HttpError(429, 'Too many requests at once from this caller; retry shortly', {
          code: 'TNTRY429',
          details: `${this.options.perCallerSetting ?? 'DATA_API_CALLER_CONCURRENCY'} lets ${this.options.perCaller} requests run at once per caller`,
          headers: { 'Retry-After': '1' },
        }),
      );
    }
    return new Promise<void>((resolve, reject) => {
      /** Takes the waiter out of the queue and fails its request with `error`. */
      const leaveQueue = (error: Error) => {
        clearTimeout(waiter.timer);
        gone?.removeEventListener('abort', onGone);
        const index = state.waiting.indexOf(waiter);
        if (index >= 0) state.waiting.splice(index, 1);
        if (state.waiting.length === 0) this.dropTurn(caller);
        this.forget(caller, state);
        reject(error);
      };
      const onGone = () => leaveQueue(new ClientGoneError());
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          gone?.removeEventListener('abort', onGone);
          resolve();
        },
        address,
        timer: setTimeout(
          () =>
            leaveQueue(
              new HttpError(504, 'Timed out acquiring connection from connection pool.', {
                code: 'PGRST003',
                headers: { 'Retry-After': '1' },
              }),
            ),
          this.options.maxWaitMs,
        ),
      };
      gone?.addEventListener('abort', onGone, { once: true });
      state.waiting.push(waiter);
      if (!this.turns.includes(caller)) this.turns.push(caller);
    });
  }

  private occupy(state: CallerState, address: string | null): void {
    this.running += 1;
    state.running += 1;
    if (address !== null) this.addresses.set(address, (this.addresses.get(address) ?? 0) + 1);
  }

  private leave(caller: string, address: string | null): void {
    const state = this.state(caller);
    this.running -= 1;
    state.running -= 1;
    if (address !== null) {
      const running = (this.addresses.get(address) ?? 1) - 1;
      if (running > 0) this.addresses.set(address, running);
      else this.addresses.delete(address);
    }
    this.dispatch();
    this.forget(caller, this.state(caller));
  }

  /** Starts waiting requests while there is room, one caller's turn at a time. */
  private dispatch(): void {
    let skipped = 0;
    while (this.running < this.options.capacity && this.turns.length > 0 && skipped < this.turns.length) {
      const caller = this.turns.shift()!;
      const state = this.state(caller);
      if (!this.canStart(caller, state, state.waiting[0]!.address)) {
        // This caller (or its address) is at its limit: it keeps its place for when a request ends.
        this.turns.push(caller);
        skipped += 1;
        continue;
      }
      skipped = 0;
      const waiter = state.waiting.shift()!;
      this.occupy(state, waiter.address);
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
