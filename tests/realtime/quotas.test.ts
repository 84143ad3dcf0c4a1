// Realtime's bounds per user and per workspace, each refused in Supabase's words while other users
// and other workspaces go on: sockets per user and per workspace (a join error), joins per second
// (a join error, then the socket is disconnected), broadcasts per second and presence calls (the
// channel closed with a system message), and presence calls per channel window. A channel belongs
// to a workspace by its topic or by the workspace its postgres_changes are filtered to.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { RawSocket, signedIn, sleep, subscribe } from './support.js';

let server: TestServer;
let query: string;

beforeAll(async () => {
  server = await startTestServer({
    REALTIME_MAX_CONNECTIONS_PER_USER: '3',
    REALTIME_MAX_CONNECTIONS_PER_WORKSPACE: '2',
    REALTIME_MAX_JOINS_PER_SECOND_PER_USER: '5',
    REALTIME_MAX_JOINS_PER_SECOND_PER_WORKSPACE: '4',
    REALTIME_MAX_MESSAGES_PER_SECOND_PER_USER: '8',
    REALTIME_MAX_MESSAGES_PER_SECOND_PER_WORKSPACE: '12',
    REALTIME_PRESENCE_CALLS_PER_WINDOW: '3',
    REALTIME_MAX_PRESENCE_PER_SECOND_PER_USER: '4',
    REALTIME_MAX_PRESENCE_PER_SECOND_PER_WORKSPACE: '6',
  });
  query = `apikey=${server.config.projectApiKey}&vsn=2.0.0`;
});
afterAll(async () => server?.close());

type Frame = [string | null, string | null, string, string, Record<string, unknown>];

const frames = (socket: RawSocket) => socket.json() as Frame[];

async function token(): Promise<string> {
  const user = await signedIn(server);
  user.client.realtime.disconnect();
  return user.token;
}

/** Joins `topic` as the token's user and returns the join's reply payload. */
async function join(
  socket: RawSocket,
  ref: string,
  topic: string,
  accessToken: string | null,
  config: Record<string, unknown> = {},
) {
  socket.send([
    ref,
    ref,
    `realtime:${topic}`,
    'phx_join',
    {
      config: {
        broadcast: { ack: true, self: false },
        presence: { key: '', enabled: false },
        private: false,
        ...config,
      },
      ...(accessToken ? { access_token: accessToken } : {}),
    },
  ]);
  const reply = () => frames(socket).find((f) => f[1] === ref && f[3] === 'phx_reply');
  await socket.until(() => reply() !== undefined || socket.closed !== null);
  return reply()?.[4];
}

function push(
  socket: RawSocket,
  joinRef: string,
  ref: string,
  topic: string,
  event: string,
  payload: object,
) {
  socket.send([joinRef, ref, `realtime:${topic}`, event, payload]);
}

const broadcast = (socket: RawSocket, joinRef: string, ref: string, topic: string) =>
  push(socket, joinRef, ref, topic, 'broadcast', { type: 'broadcast', event: 'e', payload: { ref } });

const track = (socket: RawSocket, joinRef: string, ref: string, topic: string) =>
  push(socket, joinRef, ref, topic, 'presence', {
    type: 'presence',
    event: 'track',
    payload: { ref },
  });

const systemOf = (socket: RawSocket, topic: string) =>
  frames(socket).find((f) => f[3] === 'system' && f[2] === `realtime:${topic}`)?.[4];
const closedOn = (socket: RawSocket, topic: string) =>
  frames(socket).some((f) => f[3] === 'phx_close' && f[2] === `realtime:${topic}`);
const replyTo = (socket: RawSocket, ref: string) =>
  frames(socket).find((f) => f[1] === ref && f[3] === 'phx_reply')?.[4];

const refusal = (reason: string) => ({ status: 'error', response: { reason } });
const shutdown = (topic: string, message: string) => ({
  extension: 'system',
  status: 'error',
  message,
  channel: topic,
});

test('sockets per user (supabase-js): the fourth socket of one user is refused, another user is not', async () => {
  const user = await token();
  const other = await token();
  const clients = [0, 1, 2, 3, 4].map(() => server.client());
  const results = [];
  for (const [i, client] of clients.entries()) {
    await client.realtime.setAuth(i === 4 ? other : user);
    results.push(await subscribe(client.channel(`lobby-${i}`)));
  }
  expect(results.map((r) => r.status)).toEqual([
    'SUBSCRIBED',
    'SUBSCRIBED',
    'SUBSCRIBED',
    'CHANNEL_ERROR',
    'SUBSCRIBED',
  ]);
  expect(results[3]!.error?.message).toBe('ConnectionRateLimitReached: Too many connected users');
  // A socket that goes gives its place back.
  await clients[3]!.removeAllChannels();
  await clients[0]!.removeAllChannels();
  clients[0]!.realtime.disconnect();
  await sleep(1100);
  expect((await subscribe(clients[3]!.channel('lobby-again'))).status).toBe('SUBSCRIBED');
  for (const client of clients) {
    await client.removeAllChannels();
    client.realtime.disconnect();
  }
});

test('sockets per workspace: the third socket on a workspace is refused, another workspace is not', async () => {
  const [a, b] = [randomUUID(), randomUUID()];
  const users = [await token(), await token(), await token()];
  const sockets = [
    await RawSocket.open(server, query),
    await RawSocket.open(server, query),
    await RawSocket.open(server, query),
  ];
  expect(await join(sockets[0]!, '1', `workspace:${a}`, users[0]!)).toMatchObject({ status: 'ok' });
  expect(await join(sockets[1]!, '1', `workspace:${a}:chat`, users[1]!)).toMatchObject({ status: 'ok' });
  expect(await join(sockets[2]!, '1', `workspace:${a}`, users[2]!)).toEqual(
    refusal('ConnectionRateLimitReached: Too many connected users'),
  );
  // The same socket, the same user, another workspace: let in.
  expect(await join(sockets[2]!, '2', `workspace:${b}`, users[2]!)).toMatchObject({ status: 'ok' });
  // A second channel of a socket already counted on the workspace takes no other place.
  expect(await join(sockets[0]!, '2', `workspace:${a}:other`, users[0]!)).toMatchObject({ status: 'ok' });
  // A socket leaving its workspace's channels gives its place back.
  push(sockets[1]!, '1', '3', `workspace:${a}:chat`, 'phx_leave', {});
  await sockets[1]!.until((s) => closedOn(s, `workspace:${a}:chat`) || replyTo(s, '3') !== undefined);
  await sleep(1100);
  expect(await join(sockets[2]!, '4', `workspace:${a}`, users[2]!)).toMatchObject({ status: 'ok' });
  for (const socket of sockets) socket.close();
});

test('joins per second per workspace: the join past the rate is refused and the socket disconnected', async () => {
  const [c, d] = [randomUUID(), randomUUID()];
  const users = [await token(), await token(), await token(), await token(), await token()];
  const socket = await RawSocket.open(server, query);
  const replies = [];
  for (const [i, user] of users.entries()) {
    replies.push(await join(socket, String(i + 1), `workspace:${c}:${i}`, user));
  }
  expect(replies.slice(0, 4).map((r) => (r as { status: string }).status)).toEqual(['ok', 'ok', 'ok', 'ok']);
  expect(replies[4]).toEqual(refusal('ClientJoinRateLimitReached: Too many joins per second'));
  await socket.until((s) => s.closed !== null);
  expect(socket.closed).toEqual({ code: 1008, reason: 'Too many joins per second' });
  // Another workspace, joined by the user refused, in the same second: let in.
  const other = await RawSocket.open(server, query);
  expect(await join(other, '1', `workspace:${d}`, users[4]!)).toMatchObject({ status: 'ok' });
  other.close();
});

test('joins per second per user: the sixth join in a second is refused, another user goes on', async () => {
  const user = await token();
  const other = await token();
  const socket = await RawSocket.open(server, query);
  const replies = [];
  for (let i = 0; i < 6; i += 1) replies.push(await join(socket, String(i + 1), `user-room-${i}`, user));
  expect(replies.slice(0, 5).every((r) => (r as { status: string }).status === 'ok')).toBe(true);
  expect(replies[5]).toEqual(refusal('ClientJoinRateLimitReached: Too many joins per second'));
  await socket.until((s) => s.closed !== null);
  const second = await RawSocket.open(server, query);
  expect(await join(second, '1', 'user-room-0', other)).toMatchObject({ status: 'ok' });
  second.close();
});

test('broadcasts per second per user: across two sockets, the one past the rate closes its channel', async () => {
  const user = await token();
  const other = await token();
  const [one, two, three] = [
    await RawSocket.open(server, query),
    await RawSocket.open(server, query),
    await RawSocket.open(server, query),
  ];
  expect(await join(one, '1', 'chat', user)).toMatchObject({ status: 'ok' });
  expect(await join(two, '1', 'chat', user)).toMatchObject({ status: 'ok' });
  expect(await join(three, '1', 'chat', other)).toMatchObject({ status: 'ok' });
  for (let i = 0; i < 5; i += 1) broadcast(one, '1', `a${i}`, 'chat');
  await one.until((s) => replyTo(s, 'a4') !== undefined);
  for (let i = 0; i < 4; i += 1) broadcast(two, '1', `b${i}`, 'chat');
  await two.until((s) => closedOn(s, 'chat'));
  expect(systemOf(two, 'chat')).toEqual(shutdown('chat', 'Too many messages per second'));
  // Three of the second socket's went out (eight for the user in all), the fourth did not.
  expect(replyTo(two, 'b2')).toEqual({ status: 'ok', response: {} });
  expect(replyTo(two, 'b3')).toBeUndefined();
  // Another user on the same topic still sends, and the first socket still hears.
  broadcast(three, '1', 'c0', 'chat');
  await one.until((s) => frames(s).some((f) => f[3] === 'broadcast' && JSON.stringify(f[4]).includes('c0')));
  await three.until((s) => replyTo(s, 'c0') !== undefined);
  expect(replyTo(three, 'c0')).toEqual({ status: 'ok', response: {} });
  expect(closedOn(one, 'chat')).toBe(false);
  for (const socket of [one, two, three]) socket.close();
});

test('broadcasts per second per workspace: the one past the rate closes its channel, another workspace is not slowed', async () => {
  const [e, f] = [randomUUID(), randomUUID()];
  const users = [await token(), await token(), await token()];
  const [one, two, three] = [
    await RawSocket.open(server, query),
    await RawSocket.open(server, query),
    await RawSocket.open(server, query),
  ];
  expect(await join(one, '1', `workspace:${e}`, users[0]!)).toMatchObject({ status: 'ok' });
  expect(await join(two, '1', `workspace:${e}`, users[1]!)).toMatchObject({ status: 'ok' });
  expect(await join(three, '1', `workspace:${f}`, users[2]!)).toMatchObject({ status: 'ok' });
  for (let i = 0; i < 7; i += 1) broadcast(one, '1', `a${i}`, `workspace:${e}`);
  await one.until((s) => replyTo(s, 'a6') !== undefined);
  for (let i = 0; i < 6; i += 1) broadcast(two, '1', `b${i}`, `workspace:${e}`);
  await two.until((s) => closedOn(s, `workspace:${e}`));
  expect(systemOf(two, `workspace:${e}`)).toEqual(shutdown(`workspace:${e}`, 'Too many messages per second'));
  expect(replyTo(two, 'b4')).toEqual({ status: 'ok', response: {} });
  expect(replyTo(two, 'b5')).toBeUndefined();
  // The other workspace, in the same second: its broadcast is taken.
  broadcast(three, '1', 'c0', `workspace:${f}`);
  await three.until((s) => replyTo(s, 'c0') !== undefined);
  expect(replyTo(three, 'c0')).toEqual({ status: 'ok', response: {} });
  for (const socket of [one, two, three]) socket.close();
});

test('presence calls per channel window: the fourth track closes the channel with Supabase reason', async () => {
  const socket = await RawSocket.open(server, query);
  expect(await join(socket, '1', 'pw', await token())).toMatchObject({ status: 'ok' });
  for (let i = 0; i < 4; i += 1) track(socket, '1', `t${i}`, 'pw');
  await socket.until((s) => closedOn(s, 'pw'));
  expect(['t0', 't1', 't2'].map((ref) => replyTo(socket, ref))).toEqual([
    { status: 'ok', response: {} },
    { status: 'ok', response: {} },
    { status: 'ok', response: {} },
  ]);
  expect(replyTo(socket, 't3')).toBeUndefined();
  expect(systemOf(socket, 'pw')).toEqual(shutdown('pw', 'Client presence rate limit exceeded'));
  socket.close();
});

test('presence calls per second per user: across channels, the one past the rate is closed, another user is not', async () => {
  const user = await token();
  const socket = await RawSocket.open(server, query);
  expect(await join(socket, '1', 'p1', user)).toMatchObject({ status: 'ok' });
  expect(await join(socket, '2', 'p2', user)).toMatchObject({ status: 'ok' });
  for (let i = 0; i < 3; i += 1) track(socket, '1', `a${i}`, 'p1');
  track(socket, '2', 'b0', 'p2');
  track(socket, '2', 'b1', 'p2');
  await socket.until((s) => closedOn(s, 'p2'));
  expect(systemOf(socket, 'p2')).toEqual(shutdown('p2', 'Too many presence messages per second'));
  expect(replyTo(socket, 'b0')).toEqual({ status: 'ok', response: {} });
  expect(closedOn(socket, 'p1')).toBe(false);
  const other = await RawSocket.open(server, query);
  expect(await join(other, '1', 'p1', await token())).toMatchObject({ status: 'ok' });
  track(other, '1', 'c0', 'p1');
  await other.until((s) => replyTo(s, 'c0') !== undefined);
  expect(replyTo(other, 'c0')).toEqual({ status: 'ok', response: {} });
  for (const s of [socket, other]) s.close();
});

test('presence calls per second per workspace: the one past the rate is closed, another workspace is not', async () => {
  const [g, h] = [randomUUID(), randomUUID()];
  const users = [await token(), await token(), await token(), await token()];
  const sockets = [
    await RawSocket.open(server, query),
    await RawSocket.open(server, query),
    await RawSocket.open(server, query),
  ];
  expect(await join(sockets[0]!, '1', `workspace:${g}`, users[0]!)).toMatchObject({ status: 'ok' });
  expect(await join(sockets[1]!, '1', `workspace:${g}:room`, users[1]!)).toMatchObject({ status: 'ok' });
  expect(await join(sockets[2]!, '1', `workspace:${h}`, users[2]!)).toMatchObject({ status: 'ok' });
  // Two sockets of the workspace hold its two places: the third user shares the first socket.
  expect(await join(sockets[0]!, '2', `workspace:${g}:side`, users[3]!)).toMatchObject({ status: 'ok' });
  for (let i = 0; i < 3; i += 1) track(sockets[0]!, '1', `a${i}`, `workspace:${g}`);
  for (let i = 0; i < 3; i += 1) track(sockets[1]!, '1', `b${i}`, `workspace:${g}:room`);
  await sockets[1]!.until((s) => replyTo(s, 'b2') !== undefined);
  track(sockets[0]!, '2', 'c0', `workspace:${g}:side`);
  await sockets[0]!.until((s) => closedOn(s, `workspace:${g}:side`));
  expect(systemOf(sockets[0]!, `workspace:${g}:side`)).toEqual(
    shutdown(`workspace:${g}:side`, 'Too many presence messages per second'),
  );
  track(sockets[2]!, '1', 'd0', `workspace:${h}`);
  await sockets[2]!.until((s) => replyTo(s, 'd0') !== undefined);
  expect(replyTo(sockets[2]!, 'd0')).toEqual({ status: 'ok', response: {} });
  for (const socket of sockets) socket.close();
});

test('refusals are counted by reason for the metrics', () => {
  const figures = server.realtime.figures();
  expect(figures.refusals.get('ConnectionRateLimitReached')).toBeGreaterThanOrEqual(2);
  expect(figures.refusals.get('ClientJoinRateLimitReached')).toBeGreaterThanOrEqual(2);
  expect(figures.refusals.get('Too many messages per second')).toBeGreaterThanOrEqual(2);
  expect(figures.refusals.get('Client presence rate limit exceeded')).toBeGreaterThanOrEqual(1);
  expect(figures.messagesIn).toBeGreaterThan(0);
  expect(figures.messagesOut).toBeGreaterThan(figures.refusals.size);
});

test("a channel on the app's tables filtered to one workspace counts against that workspace", async () => {
  const [w, other] = [randomUUID(), randomUUID()];
  const users = [await token(), await token(), await token()];
  const sockets = [
    await RawSocket.open(server, query),
    await RawSocket.open(server, query),
    await RawSocket.open(server, query),
  ];
  expect(await join(sockets[0]!, '1', `workspace:${w}`, users[0]!)).toMatchObject({ status: 'ok' });
  expect(await join(sockets[1]!, '1', `workspace:${w}`, users[1]!)).toMatchObject({ status: 'ok' });
  const changes = (workspace: string) => ({
    postgres_changes: [
      { event: '*', schema: 'public', table: 'projects', filter: `workspace_id=eq.${workspace}` },
      { event: '*', schema: 'public', table: 'activity_events', filter: `workspace_id=eq.${workspace}` },
    ],
  });
  // A topic of its own, but the changes of w only: w's third socket.
  expect(await join(sockets[2]!, '1', 'dashboard', users[2]!, changes(w))).toEqual(
    refusal('ConnectionRateLimitReached: Too many connected users'),
  );
  // The same for another workspace is let in.
  expect(await join(sockets[2]!, '2', 'dashboard', users[2]!, changes(other))).toMatchObject({
    status: 'ok',
  });
  for (const socket of sockets) socket.close();
});
