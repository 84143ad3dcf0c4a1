// In charge of making "e-mail me" requests (and sign-ups awaiting confirmation) take the same
// time whether or not the address has an account. Their answers are already identical; the work is not (a known address gets a token
// issued and an e-mail rendered and queued, an unknown one only its frequency slot charged), and
// a few milliseconds of difference, averaged over many tries, would tell who is registered. So
// these requests answer no sooner than a floor well above either path's usual time, failures
// included, and only a path slower than the floor (an overloaded server) shows its own time.
import { setTimeout as sleep } from 'node:timers/promises';

/** Above what either path takes on a loaded 2-core machine (a known address: ~16 ms median). */
export const EMAIL_REQUEST_FLOOR_MS = 150;

/** Runs fn, then waits until at least `floorMs` have passed since the start, whatever fn did. */
export async function atLeast<T>(floorMs: number, fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await fn();
  } finally {
    const left = floorMs - (performance.now() - started);
    if (left > 0) await sleep(left);
  }
}
