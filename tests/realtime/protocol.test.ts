// The realtime socket's frames, as realtime-js expects them: join and heartbeat replies in both
// framings (1.0.0 objects, 2.0.0 arrays), postgres_changes bindings echoed with ids and followed
// by a system message, leaving, a push to a channel not joined, and a frame that is not the
// protocol. Raw frames, so the exact shapes are what is checked.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { RawSocket } from './support.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const join = {
  config: {
    broadcast: { ack: false, self: false },
    presence: { key: '', enabled: false },
    postgres_changes: [],
    private: false,
  },
  version: 'realtime-js/2.109.0',
};

test('vsn 2.0.0: heartbeat and join replies are arrays carrying the refs', async () => {
  const socket = await RawSocket.open(server, `apikey=${server.config.projectApiKey}&vsn=2.0.0`);
  socket.send([null, '5', 'phoenix', 'heartbeat', {}]);
  socket.send(['1', '1', 'realtime:room1', 'phx_join', join]);
  await socket.until((s) => s.frames.length >= 2);
  expect(socket.json()).toEqual([
    [null, '5', 'phoenix', 'phx_reply', { status: 'ok', response: {} }],
    ['1', '1', 'realtime:room1', 'phx_reply', { status: 'ok', response: { postgres_changes: [] } }],
  ]);
  socket.send(['1', '2', 'realtime:room1', 'phx_leave', {}]);
  await socket.until((s) => s.frames.length >= 4);
  expect(socket.json().slice(2)).toEqual([
    ['1', '2', 'realtime:room1', 'phx_reply', { status: 'ok', response: {} }],
    ['1', '1', 'realtime:room1', 'phx_close', {}],
  ]);
  socket.close();
});

test('vsn 1.0.0 (and no vsn at all): messages are objects', async () => {
  for (const query of ['vsn=1.0.0&', '']) {
    const socket = await RawSocket.open(server, `${query}apikey=${server.config.projectApiKey}`);
    socket.send({ topic: 'phoenix', event: 'heartbeat', payload: {}, ref: '7', join_ref: null });
    socket.send({ topic: 'realtime:room1', event: 'phx_join', payload: join, ref: '8', join_ref: '8' });
    await socket.until((s) => s.frames.length >= 2);
    expect(socket.json()).toEqual([
      {
        topic: 'phoenix',
        event: 'phx_reply',
        payload: { status: 'ok', response: {} },
        ref: '7',
        join_ref: null,
      },
      {
        topic: 'realtime:room1',
        event: 'phx_reply',
        payload: { status: 'ok', response: { postgres_changes: [] } },
        ref: '8',
        join_ref: '8',
      },
    ]);
    socket.close();
  }
});

test('postgres_changes bindings are echoed in order with stable ids, then a system message says a table outside the publication cannot be subscribed to', async () => {
  const socket = await RawSocket.open(server, `apikey=${server.config.projectApiKey}&vsn=2.0.0`);
  const bindings = [
    { event: '*', schema: 'public', table: 'projects' },
    { event: 'INSERT', schema: 'public', table: 'workspaces', filter: 'id=eq.1' },
  ];
  socket.send([
    '3',
    '3',
    'realtime:changes',
    'phx_join',
    { ...join, config: { ...join.config, postgres_changes: bindings } },
  ]);
  await socket.until((s) => s.frames.length >= 2);
  const [reply, system] = socket.json() as [unknown[], unknown[]];
  const answer = (reply[4] as { response: { postgres_changes: { id: number }[] } }).response.postgres_changes;
  expect(answer.map(({ id: _id, ...rest }) => rest)).toEqual(bindings);
  for (const { id } of answer) expect(Number.isInteger(id) && id > 0).toBe(true);
  expect(answer[0]!.id).not.toBe(answer[1]!.id);
  expect(system).toEqual([
    '3',
    null,
    'realtime:changes',
    'system',
    {
      extension: 'postgres_changes',
      status: 'error',
      message: expect.stringContaining('Unable to subscribe to changes with given parameters') as unknown,
      channel: 'changes',
    },
  ]);
  // The same bindings get the same ids on another join.
  socket.send([
    '4',
    '4',
    'realtime:changes2',
    'phx_join',
    { ...join, config: { ...join.config, postgres_changes: bindings } },
  ]);
  await socket.until((s) => s.frames.length >= 4);
  const again = (socket.json()[2] as unknown[])[4] as { response: { postgres_changes: { id: number }[] } };
  expect(again.response.postgres_changes.map((b) => b.id)).toEqual(answer.map((b) => b.id));
  socket.close();
});

test('bad joins are refused with a reason and leave nothing joined', async () => {
  const socket = await RawSocket.open(server, `apikey=${server.config.projectApiKey}&vsn=2.0.0`);
  socket.send(['1', '1', 'realtime:', 'phx_join', join]);
  socket.send(['2', '2', 'elsewhere', 'phx_join', join]);
  socket.send(['3', '3', 'realtime:x', 'phx_join', { config: { postgres_changes: 'all' } }]);
  socket.send(['4', '4', 'realtime:x', 'phx_join', { ...join, access_token: 'not-a-token' }]);
  // A push to a channel that was never joined.
  socket.send(['9', '5', 'realtime:x', 'presence', { type: 'presence', event: 'track', payload: {} }]);
  await socket.until((s) => s.frames.length >= 5);
  const reasons = (socket.json() as unknown[][]).map(
    (f) => (f[4] as { status: string; response: { reason: string } }).response.reason,
  );
  expect(reasons[0]).toBe('TopicNameRequired: You must provide a topic name');
  expect(reasons[1]).toBe('unmatched topic');
  expect(reasons[2]).toMatch(/^Malformed postgres_changes/);
  expect(reasons[3]).toMatch(/^InvalidJWTToken: invalid JWT/);
  expect(reasons[4]).toBe('unmatched topic');
  for (const frame of socket.json() as unknown[][])
    expect((frame[4] as { status: string }).status).toBe('error');
  socket.close();
});

test('a frame that is not the protocol closes the socket with 1007', async () => {
  const socket = await RawSocket.open(server, `apikey=${server.config.projectApiKey}&vsn=2.0.0`);
  socket.send('{"topic": "phoenix"}');
  await socket.until((s) => s.closed !== null);
  expect(socket.closed!.code).toBe(1007);
  const binary = await RawSocket.open(server, `apikey=${server.config.projectApiKey}&vsn=1.0.0`);
  binary.send(Buffer.from([3, 0, 0, 0, 0, 0, 1]));
  await binary.until((s) => s.closed !== null);
  expect(binary.closed).toEqual({ code: 1007, reason: 'binary frames need vsn 2.0.0' });
});

test('the socket refuses a bad apikey, a missing one and an unknown vsn before upgrading', async () => {
  for (const [query, status] of [
    ['apikey=wrong&vsn=2.0.0', 401],
    ['vsn=2.0.0', 401],
    [`apikey=${server.config.projectApiKey}&vsn=3.0.0`, 400],
  ] as const) {
    const refused = await RawSocket.open(server, query).then(
      () => null,
      (error: { status?: number; body?: string }) => error,
    );
    expect(refused?.status, query).toBe(status);
    expect(JSON.parse(refused!.body!)).toEqual({ error: expect.any(String) as unknown });
  }
  // The service-role key is a key too.
  const service = await RawSocket.open(server, `apikey=${server.config.serviceRoleKey}&vsn=2.0.0`);
  service.close();
});
