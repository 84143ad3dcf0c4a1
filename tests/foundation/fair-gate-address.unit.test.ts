// The fair gate's per-address share: however many callers (accounts) one address has, together
// they run at most perAddress requests; a caller from another address gets the rest, and the
// address's waiting requests resume as its own requests end.
import { describe, expect, test } from 'vitest';
import { addressGroup } from '../../src/server/http/client-address.js';
import { FairGate } from '../../src/server/http/fair-gate.js';

/** Starts a request that holds its slot until finished; records the order requests started in. */
function start(gate: FairGate, caller: string, address: string | null, started: string[], label: string) {
  let finish!: () => void;
  const held = new Promise<void>((resolve) => (finish = resolve));
  const done = gate.run(
    caller,
    async () => {
      started.push(label);
      await held;
    },
    address,
  );
  return { finish, done };
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('FairGate per address', () => {
  test('many callers of one address hold at most perAddress slots; another address gets the rest', async () => {
    const gate = new FairGate({
      capacity: 10,
      perCaller: 2,
      perAddress: 4,
      maxWaitingPerCaller: 10,
      maxWaitMs: 5000,
    });
    const started: string[] = [];
    // Six accounts from one address, two requests each: twelve asked, four may run.
    const crowd = [1, 2, 3, 4, 5, 6].flatMap((account) =>
      [1, 2].map((n) => start(gate, `user:${account}`, '192.0.2.1', started, `crowd${account}.${n}`)),
    );
    await tick();
    expect(started.filter((label) => label.startsWith('crowd'))).toHaveLength(4);
    expect(gate.stats()).toEqual({ running: 4, waiting: 8 });

    // The neighbour from another address runs at once, up to its own share.
    const neighbour = [1, 2].map((n) =>
      start(gate, 'user:neighbour', '198.51.100.7', started, `neighbour${n}`),
    );
    await tick();
    expect(started).toContain('neighbour1');
    expect(started).toContain('neighbour2');
    expect(gate.stats().running).toBe(6);

    // When one of the crowd's requests ends, exactly one more of theirs starts.
    expect(started).toContain('crowd1.1');
    const first = crowd[0]!;
    first.finish();
    await first.done;
    await tick();
    expect(started.filter((label) => label.startsWith('crowd'))).toHaveLength(5);
    expect(gate.stats()).toEqual({ running: 6, waiting: 7 });

    for (const r of [...crowd, ...neighbour]) r.finish();
    await Promise.all([...crowd, ...neighbour].map((r) => r.done));
    expect(started).toHaveLength(14);
    expect(gate.stats()).toEqual({ running: 0, waiting: 0 });
  });

  test('a proven-fast caller goes beyond its own share into spare capacity, never beyond its address share', async () => {
    const gate = new FairGate({
      capacity: 20,
      perCaller: 2,
      perAddress: 3,
      maxWaitingPerCaller: 20,
      maxWaitMs: 5000,
      warmup: 1,
    });
    const started: string[] = [];
    await gate.run('user:fast', async () => undefined, '192.0.2.1');
    const requests = [1, 2, 3, 4, 5].map((n) => start(gate, 'user:fast', '192.0.2.1', started, `fast${n}`));
    await tick();
    expect(started).toEqual(['fast1', 'fast2', 'fast3']);
    for (const r of requests) r.finish();
    await Promise.all(requests.map((r) => r.done));
    expect(started).toHaveLength(5);
  });

  test('a request waiting on its address share times out with 504 and leaves nothing counted', async () => {
    const gate = new FairGate({
      capacity: 10,
      perCaller: 2,
      perAddress: 1,
      maxWaitingPerCaller: 10,
      maxWaitMs: 50,
    });
    const started: string[] = [];
    const holder = start(gate, 'user:a', '192.0.2.1', started, 'a');
    const waiting = gate.run('user:b', async () => 'ran', '192.0.2.1');
    await expect(waiting).rejects.toMatchObject({ status: 504 });
    holder.finish();
    await holder.done;
    // The address's count went back to zero: a new caller of it starts at once.
    expect(await gate.run('user:c', async () => 'ran', '192.0.2.1')).toBe('ran');
    expect(gate.stats()).toEqual({ running: 0, waiting: 0 });
  });

  test('an IPv6 client counts by its /64, an IPv4 client by its address', () => {
    expect(addressGroup('2001:db8:1:2::5')).toBe(addressGroup('2001:0db8:0001:0002:ffff:1:2:3'));
    expect(addressGroup('2001:db8:1:2::5')).not.toBe(addressGroup('2001:db8:1:3::5'));
    expect(addressGroup('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressGroup('192.0.2.1')).toBe('192.0.2.1');
    expect(addressGroup(null)).toBeNull();
  });
});
