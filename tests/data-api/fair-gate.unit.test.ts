// The fair gate in front of the database: one caller cannot hold more than its share, the others
// get the next free slot in turn, and a flood is refused instead of queued without end.
import { describe, expect, test } from 'vitest';
import { ClientGoneError, FairGate } from '../../src/server/http/fair-gate.js';

interface Pending {
  finish: () => void;
}

/** Starts a request that holds its slot until finished; records the order requests started in. */
function start(gate: FairGate, caller: string, started: string[], label = caller) {
  let finish!: () => void;
  const held = new Promise<void>((resolve) => (finish = resolve));
  const done = gate.run(caller, async () => {
    started.push(label);
    await held;
  });
  return { finish, done } satisfies Pending & { done: Promise<void> };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('FairGate', () => {
  test('one caller runs at most perCaller requests at once; the rest wait', async () => {
    const gate = new FairGate({ capacity: 10, perCaller: 2, maxWaitingPerCaller: 10, maxWaitMs: 5000 });
    const started: string[] = [];
    const requests = [1, 2, 3, 4].map((i) => start(gate, 'a', started, `a${i}`));
    await tick();
    expect(started).toEqual(['a1', 'a2']);
    expect(gate.stats()).toEqual({ running: 2, waiting: 2 });
    requests[0]!.finish();
    await requests[0]!.done;
    await tick();
    expect(started).toEqual(['a1', 'a2', 'a3']);
    for (const r of requests) r.finish();
    await Promise.all(requests.map((r) => r.done));
    expect(gate.stats()).toEqual({ running: 0, waiting: 0 });
  });

  test('a waiting request whose client went away leaves the queue and never runs', async () => {
    const gate = new FairGate({ capacity: 10, perCaller: 1, maxWaitingPerCaller: 10, maxWaitMs: 5000 });
    const started: string[] = [];
    const first = start(gate, 'a', started, 'first');
    const gone = new AbortController();
    const abandoned = gate.run('a', async () => void started.push('abandoned'), null, gone.signal);
    const next = start(gate, 'a', started, 'next');
    await tick();
    expect(gate.stats()).toEqual({ running: 1, waiting: 2 });
    gone.abort();
    await expect(abandoned).rejects.toBeInstanceOf(ClientGoneError);
    expect(gate.stats()).toEqual({ running: 1, waiting: 1 });
    first.finish();
    await first.done;
    await tick();
    expect(started).toEqual(['first', 'next']);
    // A client already gone is refused a place in the queue...
    await expect(gate.run('a', async () => undefined, null, gone.signal)).rejects.toBeInstanceOf(
      ClientGoneError,
    );
    expect(gate.stats()).toEqual({ running: 1, waiting: 0 });
    next.finish();
    await next.done;
    // ...but takes a free slot: what it started may need finishing.
    await expect(gate.run('a', async () => 'finished', null, gone.signal)).resolves.toBe('finished');
    expect(gate.stats()).toEqual({ running: 0, waiting: 0 });
  });

  test('another caller is not queued behind a busy one', async () => {
    const gate = new FairGate({ capacity: 10, perCaller: 2, maxWaitingPerCaller: 10, maxWaitMs: 5000 });
    const started: string[] = [];
    const busy = [1, 2, 3, 4, 5].map((i) => start(gate, 'busy', started, `busy${i}`));
    const quiet = start(gate, 'quiet', started);
    await tick();
    expect(started).toContain('quiet');
    quiet.finish();
    await quiet.done;
    for (const r of busy) r.finish();
    await Promise.all(busy.map((r) => r.done));
  });

  test('when the whole gate is full, freed slots go to waiting callers in turn', async () => {
    const gate = new FairGate({ capacity: 2, perCaller: 2, maxWaitingPerCaller: 10, maxWaitMs: 5000 });
    const started: string[] = [];
    const a = [1, 2, 3, 4].map((i) => start(gate, 'a', started, `a${i}`));
    const b = [1, 2].map((i) => start(gate, 'b', started, `b${i}`));
    await tick();
    expect(started).toEqual(['a1', 'a2']);
    a[0]!.finish();
    await a[0]!.done;
    await tick();
    a[1]!.finish();
    await a[1]!.done;
    await tick();
    // a had waited first, but b gets the second free slot: turns alternate.
    expect(started).toEqual(['a1', 'a2', 'a3', 'b1']);
    for (const r of [...a, ...b]) r.finish();
    await Promise.all([...a, ...b].map((r) => r.done));
    expect(started.sort()).toEqual(['a1', 'a2', 'a3', 'a4', 'b1', 'b2']);
  });

  test('a flood beyond the waiting room is refused at once with 429 and Retry-After', async () => {
    const gate = new FairGate({ capacity: 10, perCaller: 1, maxWaitingPerCaller: 2, maxWaitMs: 5000 });
    const started: string[] = [];
    const held = [1, 2, 3].map((i) => start(gate, 'a', started, `a${i}`));
    const refused = gate.run('a', async () => undefined);
    await expect(refused).rejects.toMatchObject({ status: 429, code: 'TNTRY429' });
    await expect(refused).rejects.toHaveProperty('headers.Retry-After', '1');
    for (const r of held) r.finish();
    await Promise.all(held.map((r) => r.done));
  });

  test('a request that cannot get a turn in time fails with 504 and leaves no trace', async () => {
    const gate = new FairGate({ capacity: 1, perCaller: 1, maxWaitingPerCaller: 5, maxWaitMs: 30 });
    const started: string[] = [];
    const held = start(gate, 'a', started);
    await expect(gate.run('b', async () => undefined)).rejects.toMatchObject({
      status: 504,
      code: 'PGRST003',
    });
    expect(gate.stats()).toEqual({ running: 1, waiting: 0 });
    held.finish();
    await held.done;
    await expect(gate.run('b', async () => 'ran')).resolves.toBe('ran');
  });

  test('a failing request gives its slot back', async () => {
    const gate = new FairGate({ capacity: 1, perCaller: 1, maxWaitingPerCaller: 5, maxWaitMs: 1000 });
    await expect(gate.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(gate.stats()).toEqual({ running: 0, waiting: 0 });
    await expect(gate.run('a', async () => 'next')).resolves.toBe('next');
  });

  test('a caller whose requests proved fast may use spare capacity, never the last perCaller slots', async () => {
    const gate = new FairGate({
      capacity: 10,
      perCaller: 2,
      maxWaitingPerCaller: 20,
      maxWaitMs: 5000,
      slowMs: 1000,
      warmup: 3,
    });
    for (let i = 0; i < 3; i++) await gate.run('fast', async () => undefined);
    const started: string[] = [];
    const burst = Array.from({ length: 12 }, (_, i) => start(gate, 'fast', started, `f${i}`));
    await tick();
    expect(started).toHaveLength(8); // capacity 10 less the 2 kept for others
    const other = start(gate, 'other', started);
    await tick();
    expect(started).toContain('other');
    for (const r of [...burst, other]) r.finish();
    await Promise.all([...burst, other].map((r) => r.done));
  });

  test('a caller that has not yet proven fast, or whose request ran slow, is held to perCaller', async () => {
    const gate = new FairGate({
      capacity: 10,
      perCaller: 2,
      maxWaitingPerCaller: 20,
      maxWaitMs: 5000,
      slowMs: 20,
      warmup: 3,
      // The callers here come one after the other: each is alone at the gate.
      othersRecentMs: 0,
    });
    const started: string[] = [];
    const fresh = Array.from({ length: 4 }, (_, i) => start(gate, 'new', started, `n${i}`));
    await tick();
    expect(started).toEqual(['n0', 'n1']);
    for (const r of fresh) r.finish();
    await Promise.all(fresh.map((r) => r.done));

    for (let i = 0; i < 3; i++) await gate.run('slow', async () => undefined);
    await gate.run('slow', () => new Promise((resolve) => setTimeout(resolve, 40)));
    const after: string[] = [];
    const burst = Array.from({ length: 4 }, (_, i) => start(gate, 'slow', after, `s${i}`));
    await tick();
    expect(after).toEqual(['s0', 's1']);
    for (const r of burst) r.finish();
    await Promise.all(burst.map((r) => r.done));
  });

  test('while others use the gate, a slow caller runs one request at a time; alone, its share', async () => {
    const gate = new FairGate({
      capacity: 10,
      perCaller: 3,
      maxWaitingPerCaller: 20,
      maxWaitMs: 5000,
      slowMs: 20,
      othersRecentMs: 200,
    });
    await gate.run('slow', () => new Promise((resolve) => setTimeout(resolve, 40)));

    // Another caller has a request running: one of the slow caller's requests at a time.
    const started: string[] = [];
    const other = start(gate, 'other', started, 'o');
    const burst = Array.from({ length: 3 }, (_, i) => start(gate, 'slow', started, `s${i}`));
    await tick();
    expect(started).toEqual(['o', 's0']);
    burst[0]!.finish();
    await burst[0]!.done;
    await tick();
    expect(started).toEqual(['o', 's0', 's1']);

    // The other caller finished a moment ago: still one at a time.
    other.finish();
    await other.done;
    burst[1]!.finish();
    await burst[1]!.done;
    await tick();
    expect(started).toEqual(['o', 's0', 's1', 's2']);
    const next = Array.from({ length: 2 }, (_, i) => start(gate, 'slow', started, `t${i}`));
    await tick();
    expect(started).toEqual(['o', 's0', 's1', 's2']);
    burst[2]!.finish();
    await burst[2]!.done;
    await tick();
    expect(started).toEqual(['o', 's0', 's1', 's2', 't0']);
    for (const r of next) r.finish();
    await Promise.all(next.map((r) => r.done));

    // Nobody else for longer than othersRecentMs: the slow caller has its whole share again.
    await new Promise((resolve) => setTimeout(resolve, 250));
    const alone: string[] = [];
    const last = Array.from({ length: 4 }, (_, i) => start(gate, 'slow', alone, `a${i}`));
    await tick();
    expect(alone).toEqual(['a0', 'a1', 'a2']);
    for (const r of last) r.finish();
    await Promise.all(last.map((r) => r.done));
  });

  test('a long-running request holds its fast caller back to perCaller while it runs', async () => {
    const gate = new FairGate({
      capacity: 10,
      perCaller: 1,
      maxWaitingPerCaller: 20,
      maxWaitMs: 5000,
      slowMs: 20,
      warmup: 2,
    });
    for (let i = 0; i < 2; i++) await gate.run('c', async () => undefined);
    const started: string[] = [];
    const long = start(gate, 'c', started, 'long');
    await new Promise((resolve) => setTimeout(resolve, 40));
    const next = start(gate, 'c', started, 'next');
    await tick();
    expect(started).toEqual(['long']);
    long.finish();
    await long.done;
    await tick();
    expect(started).toEqual(['long', 'next']);
    next.finish();
    await next.done;
  });
});
