// Realtime's bounds, each refused cleanly: sockets per address (429 before the upgrade), channels
// per socket (a join error), payload size (an error reply, nothing delivered), presence state
// size (the channel closed with Supabase's system message), messages per
// second (the channel closed with Supabase's system message); a silent socket closed after the
// heartbeat timeout while a heartbeating client stays; and every socket closed at shutdown.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { RawSocket, realtimeClient, sleep, subscribe } from './support.js';

let server: TestServer;
let query: string;

beforeAll(async () => {
  server = await startTestServer({
    REALTIME_MAX_CONNECTIONS_PER_ADDRESS: '3',
    REALTIME_MAX_CHANNELS_PER_SOCKET: '2',
    REALTIME_MAX_MESSAGES_PER_SECOND: '5',
    REALTIME_MAX_PAYLOAD_BYTES: '1024',
    REALTIME_MAX_PRESENCE_BYTES: '1024',
    REALTIME_HEARTBEAT_TIMEOUT_MS: '600',
  });
  query = `apikey=${server.config.projectApiKey}&vsn=2.0.0`;
});
afterAll(async () => server?.close());

const join = (ref: string, topic: string, config: Record<string, unknown> = {}) => [
  ref,
  ref,
  `realtime:${topic}`,
  'phx_join',
  {
    config: {
      broadcast: { ack: true, self: true },
      presence: { key: '', enabled: false },
      private: false,
      ...config,
    },
  },
];

/** Keeps a raw socket alive under the short heartbeat timeout. */
function heartbeat(socket: RawSocket): NodeJS.Timeout {
  let ref = 1000;
  return setInterval(() => socket.send([null, String((ref += 1)), 'phoenix', 'heartbeat', {}]), 150);
}

test('sockets per address: the one past the limit is refused with 429 before upgrading', async () => {
  const open = [
    await RawSocket.open(server, query),
    await RawSocket.open(server, query),
    await RawSocket.open(server, query),
  ];
  const refused = await RawSocket.open(server, query).then(
    () => null,
    (error: { status?: number; body?: string }) => error,
  );
  expect(refused?.status).toBe(429);
  expect(JSON.parse(refused!.body!)).toEqual({ error: 'Too many connected users' });
  // A closed socket gives its place back.
  open[0]!.close();
  await sleep(100);
  const again = await RawSocket.open(server, query);
  for (const socket of [...open, again]) socket.close();
  await sleep(100);
});

test('channels per socket: the join past the limit is refused and the others go on', async () => {
  const socket = await RawSocket.open(server, query);
  const beat = heartbeat(socket);
  socket.send(join('1', 'a'));
  socket.send(join('2', 'b'));
  socket.send(join('3', 'c'));
  const replies = () =>
    (socket.json() as unknown[][]).filter((f) => f[3] === 'phx_reply' && f[2] !== 'phoenix');
  await socket.until(() => replies().length >= 3);
  expect(replies().map((f) => (f[4] as { status: string }).status)).toEqual(['ok', 'ok', 'error']);
  expect(replies()[2]![4]).toEqual({
    status: 'error',
    response: { reason: 'ChannelRateLimitReached: Too many channels' },
  });
  // Leaving one makes room.
  socket.send(['1', '4', 'realtime:a', 'phx_leave', {}]);
  socket.send(join('5', 'c'));
  await socket.until(() => replies().length >= 5);
  expect(replies()[4]![4]).toMatchObject({ status: 'ok' });
  clearInterval(beat);
  socket.close();
});

test('payload size: a broadcast over the limit is refused and reaches nobody', async () => {
  const socket = await RawSocket.open(server, query);
  const beat = heartbeat(socket);
  socket.send(join('1', 'big'));
  socket.send([
    '1',
    '2',
    'realtime:big',
    'broadcast',
    { type: 'broadcast', event: 'e', payload: { text: 'x'.repeat(2000) } },
  ]);
  socket.send([
    '1',
    '3',
    'realtime:big',
    'broadcast',
    { type: 'broadcast', event: 'e', payload: { text: 'small' } },
  ]);
  socket.send([
    '1',
    '4',
    'realtime:big',
    'presence',
    { type: 'presence', event: 'track', payload: { text: 'x'.repeat(2000) } },
  ]);
  const reply = (ref: string) =>
    (socket.json() as unknown[][]).find((f) => f[1] === ref && f[3] === 'phx_reply');
  await socket.until(() => (socket.json() as unknown[][]).some((f) => f[3] === 'phx_close'));
  expect(reply('2')![4]).toEqual({ status: 'error', response: { error: 'payload_size_exceeded' } });
  expect(reply('3')![4]).toEqual({ status: 'ok', response: {} });
  // A presence state too large closes the channel, as on Supabase: no reply, a system message.
  expect(reply('4')).toBeUndefined();
  const system = (socket.json() as unknown[][]).find((f) => f[3] === 'system');
  expect(system![4]).toEqual({
    extension: 'system',
    status: 'error',
    message: 'Track message size exceeded',
    channel: 'big',
  });
  expect((socket.json() as unknown[][]).some((f) => f[3] === 'phx_close')).toBe(true);
  // Only the small one was delivered (self: true).
  const delivered = (socket.json() as unknown[][]).filter((f) => f[3] === 'broadcast');
  expect(delivered).toEqual([
    [null, null, 'realtime:big', 'broadcast', { type: 'broadcast', event: 'e', payload: { text: 'small' } }],
  ]);
  clearInterval(beat);
  socket.close();
});

test('messages per second: the channel that floods is closed with the system message', async () => {
  const socket = await RawSocket.open(server, query);
  socket.send(join('1', 'flood'));
  await socket.until((s) => s.frames.length >= 1);
  for (let i = 0; i < 10; i += 1) {
    socket.send([
      '1',
      String(10 + i),
      'realtime:flood',
      'broadcast',
      { type: 'broadcast', event: 'e', payload: { i } },
    ]);
  }
  const close = () => (socket.json() as unknown[][]).find((f) => f[3] === 'phx_close');
  await socket.until(() => close() !== undefined);
  const system = (socket.json() as unknown[][]).find((f) => f[3] === 'system');
  expect(system).toEqual([
    '1',
    null,
    'realtime:flood',
    'system',
    { extension: 'system', status: 'error', message: 'Too many messages per second', channel: 'flood' },
  ]);
  // The join counted as one message: four broadcasts went out before the limit.
  expect((socket.json() as unknown[][]).filter((f) => f[3] === 'broadcast')).toHaveLength(4);
  socket.close();
});

test('a socket that misses its heartbeats is closed; a heartbeating client is not', async () => {
  const silent = await RawSocket.open(server, query);
  const client = realtimeClient(server, { heartbeatIntervalMs: 150 });
  const channel = client.channel('alive');
  expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
  await silent.until((s) => s.closed !== null, 3000);
  expect(silent.closed).toEqual({ code: 1000, reason: 'heartbeat timeout' });
  await sleep(800);
  expect(client.realtime.isConnected()).toBe(true);
  expect(channel.state).toBe('joined');
  await client.removeAllChannels();
});

test('shutdown closes every realtime socket', async () => {
  const other = await startTestServer();
  const socket = await RawSocket.open(other, `apikey=${other.config.projectApiKey}&vsn=2.0.0`);
  const client = realtimeClient(other);
  expect((await subscribe(client.channel('room'))).status).toBe('SUBSCRIBED');
  expect(other.realtime.connections()).toBe(2);
  const started = Date.now();
  await other.close();
  expect(Date.now() - started).toBeLessThan(3000);
  await socket.until((s) => s.closed !== null);
  expect(socket.closed).toEqual({ code: 1001, reason: 'server shutting down' });
  expect(other.realtime.connections()).toBe(0);
  client.realtime.disconnect();
});
