// The password-hash queue: at most `concurrency` jobs at once; a caller with a backlog does not
// delay another caller's job by more than the jobs already running (turns are round robin); a
// caller's running and waiting jobs beyond its share are refused with 429 over_request_rate_limit,
// the service role's are not; a request held with within() counts from its start; and a caller
// is forgotten once it has nothing running or waiting.
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, test } from 'vitest';
import { HashQueue, hashCallers } from '../../src/server/identity/hash-queue.js';

const a = hashCallers.user('a');
const b = hashCallers.user('b');

test("turns are shared: another caller's job waits only for the jobs already running", async () => {
  const queue = new HashQueue({ concurrency: 2, perCaller: 100, maxQueued: 100 });
  const order: string[] = [];
  let peak = 0;
  const job = (name: string) => async () => {
    peak = Math.max(peak, queue.stats().running);
    await sleep(30);
    order.push(name);
  };
  const backlog = Array.from({ length: 8 }, (_, i) => queue.run(a, job(`a${i}`)));
  await sleep(5);
  const other = queue.run(b, job('b'));
  await Promise.all([...backlog, other]);
  expect(peak).toBe(2);
  // a0 and a1 were running when b arrived; b took the next free slot, before a's other six.
  expect(order.indexOf('b')).toBeLessThanOrEqual(3);
  expect(queue.stats()).toEqual({ running: 0, queued: 0, callers: 0 });
});

test("a caller's jobs beyond its share are refused at once with 429; the service's are not", async () => {
  const queue = new HashQueue({ concurrency: 1, perCaller: 3, maxQueued: 100 });
  const results = await Promise.allSettled(Array.from({ length: 6 }, () => queue.run(a, () => sleep(10))));
  const refused = results.filter((r) => r.status === 'rejected');
  expect(refused).toHaveLength(3);
  expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({
    status: 429,
    code: 'over_request_rate_limit',
  });
  const trusted = await Promise.allSettled(
    Array.from({ length: 6 }, () => queue.run(hashCallers.service, () => sleep(5))),
  );
  expect(trusted.every((r) => r.status === 'fulfilled')).toBe(true);
  expect(queue.stats()).toEqual({ running: 0, queued: 0, callers: 0 });
});

test('within() holds a place from the start of the request; the whole queue is bounded too', async () => {
  const queue = new HashQueue({ concurrency: 1, perCaller: 2, maxQueued: 3 });
  const requests = await Promise.allSettled(
    Array.from({ length: 5 }, () =>
      queue.within(a, async () => {
        await sleep(20); // the request's other work, before it hashes
        return queue.run(a, () => sleep(5));
      }),
    ),
  );
  expect(requests.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
  expect(requests.filter((r) => r.status === 'rejected')).toHaveLength(3);

  const running = queue.run(hashCallers.address('192.0.2.1'), () => sleep(30));
  const waiting = ['192.0.2.2', '192.0.2.3', '192.0.2.4', '192.0.2.5'].map((ip) =>
    queue.run(hashCallers.address(ip), () => sleep(1)),
  );
  const settled = await Promise.allSettled([running, ...waiting]);
  expect(settled.filter((r) => r.status === 'rejected')).toHaveLength(1);
  expect(queue.stats()).toEqual({ running: 0, queued: 0, callers: 0 });
});

test('an IPv6 client counts by its /64', () => {
  expect(hashCallers.address('2001:db8:1:2:aaaa::1').key).toBe(hashCallers.address('2001:db8:1:2::ffff').key);
  expect(hashCallers.address('2001:db8:1:3::1').key).not.toBe(hashCallers.address('2001:db8:1:2::1').key);
});
