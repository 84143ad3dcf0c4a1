// Fairness over real sockets: while a flood of broadcasts on one workspace's topic is still being
// delivered, another workspace's broadcast already reaches its reader; the flood then reaches all
// its readers, every broadcast, in the order each sender sent them. A flood past the workspace's
// queue bound closes the sending channel, as one over its rate.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { RawSocket } from './support.js';

let server: TestServer;
let query: string;

beforeAll(async () => {
  server = await startTestServer({
    REALTIME_MAX_MESSAGES_PER_SECOND: '10000',
    REALTIME_MAX_MESSAGES_PER_SECOND_PER_USER: '100000',
    REALTIME_MAX_MESSAGES_PER_SECOND_PER_WORKSPACE: '100000',
  });
  query = `apikey=${server.config.projectApiKey}&vsn=2.0.0`;
});
afterAll(async () => server?.close());

const READERS = 10;
const SENDERS = 3;
const EACH = 300;

async function joined(topic: string, ack = false): Promise<RawSocket> {
  const socket = await RawSocket.open(server, query);
  socket.send([
    '1',
    '1',
    `realtime:${topic}`,
    'phx_join',
    {
      config: {
        broadcast: { ack, self: false },
        presence: { key: '', enabled: false },
        private: false,
      },
    },
  ]);
  await socket.until((s) => s.frames.length >= 1);
  return socket;
}

const broadcasts = (socket: RawSocket) =>
  (socket.json() as [unknown, unknown, string, string, { payload: { from: number; n: number } }][]).filter(
    (f) => f[3] === 'broadcast',
  );

test("a flood on one workspace does not hold up another's delivery", async () => {
  const [a, b] = [`workspace:${randomUUID()}`, `workspace:${randomUUID()}`];
  const readers = await Promise.all([...Array(READERS).keys()].map(() => joined(a)));
  const senders = await Promise.all([...Array(SENDERS).keys()].map(() => joined(a)));
  const bReader = await joined(b);
  const bSender = await joined(b);

  let pendingWhenBArrived = -1;
  let aReceivedWhenBArrived = -1;
  bReader.ws.on('message', () => {
    if (pendingWhenBArrived >= 0) return;
    pendingWhenBArrived = server.realtime.figures().pendingBroadcasts;
    aReceivedWhenBArrived = readers.reduce((sum, r) => sum + r.frames.length - 1, 0);
  });
  for (const [from, sender] of senders.entries()) {
    for (let n = 0; n < EACH; n += 1) {
      sender.send([
        '1',
        null,
        `realtime:${a}`,
        'broadcast',
        { type: 'broadcast', event: 'e', payload: { from, n } },
      ]);
    }
  }
  bSender.send([
    '1',
    null,
    `realtime:${b}`,
    'broadcast',
    { type: 'broadcast', event: 'e', payload: { from: 9, n: 0 } },
  ]);

  await bReader.until((s) => broadcasts(s).length === 1, 20_000);
  for (const reader of readers) await reader.until((s) => broadcasts(s).length === SENDERS * EACH, 60_000);
  // B got through while A's flood was still waiting its turns, not after it.
  expect(pendingWhenBArrived).toBeGreaterThan(0);
  expect(aReceivedWhenBArrived).toBeLessThan(READERS * SENDERS * EACH);
  // Every reader of A got every broadcast, each sender's in order.
  for (const reader of readers) {
    const got = broadcasts(reader).map((f) => f[4].payload);
    for (let from = 0; from < SENDERS; from += 1) {
      expect(got.filter((p) => p.from === from).map((p) => p.n)).toEqual([...Array(EACH).keys()]);
    }
  }
  for (const socket of [...readers, ...senders, bReader, bSender]) socket.close();
}, 90_000);

test("a workspace's queue is bounded: past it the sending channel is closed, unacknowledged; others go on", async () => {
  const [a, b] = [`workspace:${randomUUID()}`, `workspace:${randomUUID()}`];
  const readers = await Promise.all([...Array(READERS).keys()].map(() => joined(a)));
  const senders = await Promise.all([0, 1].map(() => joined(a, true)));
  const bReader = await joined(b);
  const bSender = await joined(b);
  const each = 700;
  for (const [from, sender] of senders.entries()) {
    for (let n = 0; n < each; n += 1) {
      sender.send([
        '1',
        `${from}-${n}`,
        `realtime:${a}`,
        'broadcast',
        { type: 'broadcast', event: 'e', payload: { from, n } },
      ]);
    }
  }
  const closed = (s: RawSocket) =>
    (s.json() as [unknown, unknown, string, string, Record<string, unknown>][]).filter(
      (f) => f[3] === 'phx_close' || f[3] === 'system',
    );
  await Promise.race(senders.map((s) => s.until(() => closed(s).length >= 2, 20_000)));
  const stopped = senders.find((s) => closed(s).length >= 2)!;
  expect(closed(stopped).map((f) => f[3])).toEqual(['system', 'phx_close']);
  expect(closed(stopped)[0]![4]).toMatchObject({ message: 'Too many messages per second' });
  // Every broadcast was answered (ok while the channel was open, unmatched topic after) but the one
  // that found no room: it closed the channel instead.
  const replies = () =>
    (stopped.json() as [unknown, string, string, string, { status: string }][]).filter(
      (f) => f[3] === 'phx_reply' && f[1] !== '1',
    );
  await stopped.until(() => replies().length >= each - 1, 20_000);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(replies()).toHaveLength(each - 1);
  expect(replies().filter((f) => f[4].status === 'ok').length).toBeGreaterThan(0);
  // The other workspace is served meanwhile.
  bSender.send([
    '1',
    null,
    `realtime:${b}`,
    'broadcast',
    { type: 'broadcast', event: 'e', payload: { from: 9, n: 0 } },
  ]);
  await bReader.until((s) => broadcasts(s).length === 1, 20_000);
  for (const socket of [...readers, ...senders, bReader, bSender]) socket.close();
}, 90_000);
