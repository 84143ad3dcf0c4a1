// In charge of the one queue every password hash of the process goes through (argon2id hashes
// and verifies, bcrypt verifies): at most `concurrency` run at once, waiting callers take turns
// round robin so one caller's backlog never delays another's next hash by more than the hashes
// already running, and one caller may have only `perCaller` hashes running or waiting (more are
// refused with GoTrue's 429 over_request_rate_limit). A caller is the signed-in user, or the
// client's address (an IPv6 /64) when nobody is signed in. Each hash takes a libuv thread and a
// core for tens of milliseconds: without this, 48 password changes from one account queued ahead
// of everyone's sign-in and took its median from 36 ms to 1.35 s.
import { addressGroup } from '../http/client-address.js';
import { errors } from './errors.js';

export interface HashQueueLimits {
  /** hashes running at once, whoever asks (PASSWORD_HASH_CONCURRENCY) */
  concurrency: number;
  /** hashes one caller may have running or waiting (PASSWORD_HASHES_PER_CALLER) */
  perCaller: number;
  /** hashes waiting, all callers together (PASSWORD_HASH_QUEUE) */
  maxQueued: number;
}

/** Who a hash is for; the service role (trusted server work) has no per-caller cap. */
export interface HashCaller {
  key: string;
  trusted?: boolean;
}

export const hashCallers = {
  user: (userId: string): HashCaller => ({ key: `user:${userId}` }),
  /** nobody signed in: the client's address counts, an IPv6 address by its /64 */
  address: (ip: string | null): HashCaller => ({ key: `address:${addressGroup(ip) ?? 'unknown'}` }),
  service: { key: 'service', trusted: true } as HashCaller,
};

interface CallerState {
  /** hashes of this caller running now */
  running: number;
  /** starts of this caller's waiting hashes, oldest first */
  waiting: (() => void)[];
  /** requests of this caller inside within(), each holding a place from its start */
  requests: number;
}

export class HashQueue {
  private running = 0;
  private queued = 0;
  private readonly callers = new Map<string, CallerState>();
  /** callers with a hash waiting, in the order of their next turn */
  private readonly turns: string[] = [];

  constructor(readonly limits: HashQueueLimits) {}

  /** Runs job when the caller's turn comes; throws 429 when the caller (or the queue) is full. */
  async run<T>(caller: HashCaller, job: () => Promise<T>): Promise<T> {
    await this.enter(caller);
    try {
      return await job();
    } finally {
      this.leave(caller.key);
    }
  }

  /**
   * Runs a whole request that will hash (a password change) as one of the caller's places, taken
   * before the request does anything else: a caller already holding its share is refused (429)
   * for the price of a map lookup, and a burst of such requests cannot all reach the database
   * before any of them is counted.
   */
  async within<T>(caller: HashCaller, request: () => Promise<T>): Promise<T> {
    let state = this.callers.get(caller.key);
    if (!caller.trusted && state && this.held(state) >= this.limits.perCaller) throw errors.rateLimited(1);
    if (!state) this.callers.set(caller.key, (state = { running: 0, waiting: [], requests: 0 }));
    state.requests += 1;
    try {
      return await request();
    } finally {
      state.requests -= 1;
      this.forget(caller.key, state);
    }
  }

  /** Hashes running and waiting, and callers known (for tests and diagnostics). */
  stats(): { running: number; queued: number; callers: number } {
    return { running: this.running, queued: this.queued, callers: this.callers.size };
  }

  private enter(caller: HashCaller): Promise<void> {
    let state = this.callers.get(caller.key);
    // Within a request that holds its places (within), the requests are what is counted.
    if (!caller.trusted && state && state.requests === 0 && this.held(state) >= this.limits.perCaller) {
      throw errors.rateLimited(1);
    }
    if (!state) this.callers.set(caller.key, (state = { running: 0, waiting: [], requests: 0 }));
    // A free slot is taken at once when nobody waits for it: the queue never idles a core.
    if (this.running < this.limits.concurrency && this.turns.length === 0) {
      this.running += 1;
      state.running += 1;
      return Promise.resolve();
    }
    if (this.queued >= this.limits.maxQueued) {
      this.forget(caller.key, state);
      throw errors.rateLimited(1);
    }
    const waiting = state;
    return new Promise<void>((resolve) => {
      waiting.waiting.push(resolve);
      this.queued += 1;
      if (!this.turns.includes(caller.key)) this.turns.push(caller.key);
    });
  }

  private leave(key: string): void {
    const state = this.callers.get(key)!;
    this.running -= 1;
    state.running -= 1;
    // The freed slot goes to the caller whose turn it is, not to whoever queued the most.
    while (this.running < this.limits.concurrency && this.turns.length > 0) {
      const next = this.turns.shift()!;
      const nextState = this.callers.get(next)!;
      const start = nextState.waiting.shift()!;
      this.queued -= 1;
      this.running += 1;
      nextState.running += 1;
      if (nextState.waiting.length > 0) this.turns.push(next);
      start();
    }
    this.forget(key, state);
  }

  /** Places the caller holds: its requests inside within(), or its hashes if more. */
  private held(state: CallerState): number {
    return Math.max(state.requests, state.running + state.waiting.length);
  }

  private forget(key: string, state: CallerState): void {
    if (state.running === 0 && state.waiting.length === 0 && state.requests === 0) this.callers.delete(key);
  }
}
