// Fair delivery: a flood of broadcasts on one workspace's topic does not hold up another
// workspace's next broadcast (it goes out within the first turns, long before the flood is
// through), every broadcast still reaches every reader, and each topic's order is kept.
import { expect, test } from 'vitest';
import type { Broadcast } from '../../src/server/realtime/broadcast.js';
import { FANOUT_MAX_PENDING, FANOUT_QUANTUM, FairFanout } from '../../src/server/realtime/fanout.js';
import { topicKey, Topics, type Channel, type ChannelSocket } from '../../src/server/realtime/topics.js';

const A = 'workspace:6f1c1b9e-0000-4000-8000-00000000000a';
const B = 'workspace:6f1c1b9e-0000-4000-8000-00000000000b';

/** Every frame any socket was handed, in the order the process handed them out. */
const sent: { socket: number; frame: string }[] = [];

function readers(topics: Topics, name: string, count: number, first: number): void {
  for (let i = 0; i < count; i += 1) {
    const id = first + i;
    const socket: ChannelSocket = {
      vsn: '1.0.0',
      push: () => undefined,
      sendFrame: (frame) => sent.push({ socket: id, frame: String(frame) }),
      ping: () => undefined,
    };
    topics.add({
      topic: `realtime:${name}`,
      name,
      joinRef: '1',
      private: false,
      key: topicKey(false, `realtime:${name}`),
      socket,
      broadcastSelf: false,
      broadcastAck: false,
      presenceKey: String(id),
      caller: { caller: { kind: 'anon', claims: { role: 'anon' } }, exp: null },
      permissions: { readBroadcast: true, readPresence: true, writeBroadcast: true, writePresence: true },
      expiryTimer: undefined,
    } satisfies Channel);
  }
}

const message = (name: string, n: number): Broadcast => ({
  topic: `realtime:${name}`,
  private: false,
  event: 'e',
  body: { kind: 'json', value: { n } },
});

async function drained(fanout: FairFanout): Promise<void> {
  while (fanout.pending() > 0) await new Promise((resolve) => setImmediate(resolve));
}

test("a flood on one workspace does not hold up another workspace's broadcast", async () => {
  const topics = new Topics();
  readers(topics, A, 10, 0);
  readers(topics, B, 1, 100);
  const fanout = new FairFanout(topics);
  const flood = 500;
  // All in one turn, as when a socket's frames are read from the network in one chunk.
  for (let n = 0; n < flood; n += 1) fanout.deliver(topicKey(false, `realtime:${A}`), message(A, n), null);
  fanout.deliver(topicKey(false, `realtime:${B}`), message(B, 0), null);
  await drained(fanout);

  // Everything reached everyone: 500 broadcasts to 10 readers, 1 to 1.
  expect(sent.filter((s) => s.socket < 100)).toHaveLength(flood * 10);
  const bAt = sent.findIndex((s) => s.socket === 100);
  expect(bAt).toBeGreaterThanOrEqual(0);
  // B went out within A's first few turns, not behind A's 5,000 sends.
  expect(bAt).toBeLessThan(4 * FANOUT_QUANTUM);
  expect(sent.length - bAt).toBeGreaterThan(flood * 10 - 4 * FANOUT_QUANTUM);
  // Each reader of A got A's broadcasts in the order they were sent.
  for (let socket = 0; socket < 10; socket += 1) {
    const order = sent
      .filter((s) => s.socket === socket)
      .map((s) => (JSON.parse(s.frame) as { payload: { payload: { n: number } } }).payload.payload.n);
    expect(order).toEqual([...Array(flood).keys()]);
  }
});

test('a queue holds a bounded number of broadcasts: past it the sender is told, other queues go on', async () => {
  sent.length = 0;
  const topics = new Topics();
  readers(topics, A, 2, 0);
  readers(topics, B, 1, 100);
  const fanout = new FairFanout(topics);
  const overflowed: (Channel | null)[] = [];
  fanout.overflow = (from) => overflowed.push(from);
  const extra = 5;
  const total = FANOUT_MAX_PENDING + FANOUT_QUANTUM + extra;
  for (let n = 0; n < total; n += 1) {
    fanout.deliver(topicKey(false, `realtime:${A}`), message(A, n), null);
  }
  expect(fanout.pending()).toBe(FANOUT_MAX_PENDING);
  fanout.deliver(topicKey(false, `realtime:${B}`), message(B, 0), null);
  expect(overflowed.length).toBeGreaterThanOrEqual(extra);
  await drained(fanout);
  expect(sent.filter((s) => s.socket === 100)).toHaveLength(1);
  // What was taken was delivered; what was not never was.
  expect(sent.filter((s) => s.socket === 0)).toHaveLength(total - overflowed.length);
});
