// Who may use a channel: private channels decided by the caller's own policies on
// realtime.messages (reading to join, inserting to send, over the socket and over REST), a
// signed-out session refused, a token's expiry closing the channel with Supabase's system
// message, and a refreshed token (supabase-js pushes it as access_token) keeping it open.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RealtimeChannel } from '@supabase/supabase-js';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { RawSocket, realtimeClient, signedIn, sleep, subscribe } from './support.js';

/** Every status a channel reports, and every system message it receives. */
function watch(channel: RealtimeChannel) {
  const seen = { statuses: [] as string[], errors: [] as string[], system: [] as Record<string, unknown>[] };
  channel.on('system', {}, (payload: Record<string, unknown>) => seen.system.push(payload));
  channel.subscribe((status, error) => {
    seen.statuses.push(status);
    if (error) seen.errors.push(error.message);
  });
  return seen;
}

async function until(check: () => boolean, ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}

describe('private channels', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
    // As a team writes them on Supabase: everyone signed in reads 'lobby'; a user's own room
    // ('room-<their id>') is theirs to read and to send on.
    await server.pool.query(`
      create policy "read lobby and own room" on realtime.messages for select to authenticated
        using (realtime.topic() = 'lobby' or realtime.topic() = 'room-' || (select auth.uid())::text);
      create policy "send in own room" on realtime.messages for insert to authenticated
        with check (realtime.topic() = 'room-' || (select auth.uid())::text);
    `);
  });
  afterAll(async () => server?.close());

  test('a user joins their own private room; another user and anonymous callers are refused', async () => {
    const ada = await signedIn(server);
    const grace = await signedIn(server);
    const topic = `room-${ada.userId}`;
    const own = await subscribe(ada.client.channel(topic, { config: { private: true } }));
    expect(own.status).toBe('SUBSCRIBED');
    const other = await subscribe(grace.client.channel(topic, { config: { private: true } }));
    expect(other.status).toBe('CHANNEL_ERROR');
    expect(other.error?.message).toBe(
      `Unauthorized: You do not have permissions to read from this Channel topic: ${topic}`,
    );
    const anonymous = await subscribe(realtimeClient(server).channel('lobby', { config: { private: true } }));
    expect(anonymous.status).toBe('CHANNEL_ERROR');
    expect(anonymous.error?.message).toMatch(/^Unauthorized: /);
    // The same name as a public channel is another topic, open to all.
    const open = await subscribe(realtimeClient(server).channel(topic));
    expect(open.status).toBe('SUBSCRIBED');
    for (const client of [ada.client, grace.client]) await client.removeAllChannels();
  });

  test('sending needs the insert policy: a reader’s broadcasts are dropped, over the socket and REST', async () => {
    const ada = await signedIn(server);
    const grace = await signedIn(server);
    const received: unknown[] = [];
    const listener = ada.client.channel('lobby', { config: { private: true } });
    listener.on('broadcast', { event: '*' }, (message) => received.push(message.payload));
    expect((await subscribe(listener)).status).toBe('SUBSCRIBED');
    const publicListener = realtimeClient(server).channel('lobby');
    const publicReceived: unknown[] = [];
    publicListener.on('broadcast', { event: '*' }, (message) => publicReceived.push(message.payload));
    expect((await subscribe(publicListener)).status).toBe('SUBSCRIBED');

    // Grace may read the lobby but not send there: dropped silently, so an acked push times out.
    const reader = grace.client.channel('lobby', { config: { private: true, broadcast: { ack: true } } });
    expect((await subscribe(reader)).status).toBe('SUBSCRIBED');
    expect(
      await reader.send({ type: 'broadcast', event: 'e', payload: { from: 'socket' } }, { timeout: 1000 }),
    ).toBe('timed out');
    const rest = await call(server, 'POST', '/realtime/v1/api/broadcast', {
      body: { messages: [{ topic: 'lobby', event: 'e', payload: { from: 'rest' }, private: true }] },
      headers: { authorization: `Bearer ${grace.token}` },
    });
    expect(rest.status).toBe(202);

    // Ada sends in her own room, where she reads too.
    const room = ada.client.channel(`room-${ada.userId}`, {
      config: { private: true, broadcast: { ack: true, self: true } },
    });
    const inRoom: unknown[] = [];
    room.on('broadcast', { event: '*' }, (message) => inRoom.push(message.payload));
    expect((await subscribe(room)).status).toBe('SUBSCRIBED');
    expect(await room.send({ type: 'broadcast', event: 'e', payload: { mine: true } })).toBe('ok');
    const viaRest = await call(
      server,
      'POST',
      `/realtime/v1/api/broadcast/room-${ada.userId}/events/e?private=true`,
      {
        body: { rest: true },
        headers: { authorization: `Bearer ${ada.token}` },
      },
    );
    expect(viaRest.status).toBe(202);
    await sleep(300);
    expect(inRoom).toEqual([{ mine: true }, { rest: true }]);
    expect(received).toEqual([]);
    expect(publicReceived).toEqual([]);
    // The probes left nothing behind.
    const rows = await server.pool.query('select count(*)::int as n from realtime.messages');
    expect(rows.rows[0].n).toBe(0);
    await ada.client.removeAllChannels();
    await grace.client.removeAllChannels();
  });

  test('a socket that goes while its private join is being checked leaves no channel behind', async () => {
    const ada = await signedIn(server);
    const before = { connections: server.realtime.connections(), channels: server.realtime.channels() };
    for (let i = 0; i < 5; i += 1) {
      const socket = await RawSocket.open(server, `apikey=${server.config.projectApiKey}&vsn=2.0.0`);
      socket.send([
        '1',
        '1',
        'realtime:lobby',
        'phx_join',
        { config: { private: true, presence: { key: 'ada', enabled: true } }, access_token: ada.token },
      ]);
      socket.close();
    }
    await sleep(500);
    expect({ connections: server.realtime.connections(), channels: server.realtime.channels() }).toEqual(
      before,
    );
  });

  test('a signed-out session cannot join a channel, private or public, with its old token', async () => {
    const ada = await signedIn(server);
    const before = realtimeClient(server);
    before.realtime.setAuth(ada.token);
    expect((await subscribe(before.channel('open-room'))).status).toBe('SUBSCRIBED');
    await ada.client.auth.signOut();
    for (const config of [{ private: true }, { private: false }]) {
      const stale = realtimeClient(server);
      stale.realtime.setAuth(ada.token);
      const joined = await subscribe(stale.channel(config.private ? 'lobby' : 'open-room', { config }));
      expect(joined.status, JSON.stringify(config)).toBe('CHANNEL_ERROR');
      expect(joined.error?.message).toBe('Unauthorized: This session has ended: sign in again');
    }
    await before.removeAllChannels();
  });
});

describe('token lifetimes', () => {
  let server: TestServer;

  beforeAll(async () => {
    // Access tokens live four seconds here (a token's exp is a whole second: it ends 3 to 4 s after it is issued).
    server = await startTestServer({ JWT_EXPIRY: '4' });
  });
  afterAll(async () => server?.close());

  test('an expired token closes the channel with the system message', async () => {
    const ada = await signedIn(server);
    const seen = watch(ada.client.channel('expiring'));
    await until(() => seen.statuses.includes('SUBSCRIBED'));
    await until(() => seen.statuses.includes('CLOSED'), 6000);
    expect(seen.system).toEqual([
      {
        extension: 'system',
        status: 'error',
        message: 'Token has expired 0 seconds ago',
        channel: 'expiring',
      },
    ]);
  });

  test('a join with an expired token is refused in Supabase’s words', async () => {
    const ada = await signedIn(server);
    await sleep(4200);
    const late = realtimeClient(server);
    late.realtime.setAuth(ada.token);
    const joined = await subscribe(late.channel('late'));
    expect(joined.status).toBe('CHANNEL_ERROR');
    expect(joined.error?.message).toMatch(/^InvalidJWTExpiration: Token has expired \d+ seconds ago$/);
  });

  test('a refreshed token keeps the channel open past the first token’s expiry', async () => {
    const ada = await signedIn(server);
    const started = Date.now();
    const channel = ada.client.channel('refreshed');
    const seen = watch(channel);
    await until(() => seen.statuses.includes('SUBSCRIBED'));
    // Refreshed 2 s in: the first token ends 3 to 4 s in, the new one 5 to 6 s in.
    await sleep(Math.max(0, started + 2000 - Date.now()));
    // supabase-js hands the new token to realtime, which pushes it as access_token.
    const { error } = await ada.client.auth.refreshSession();
    expect(error).toBeNull();
    await sleep(Math.max(0, started + 4400 - Date.now()));
    expect(seen.system).toEqual([]);
    expect(seen.statuses).toEqual(['SUBSCRIBED']);
    // The new token expires in its turn, and then the channel closes.
    await until(() => seen.statuses.includes('CLOSED'), 6000);
    expect(seen.system[0]).toMatchObject({ extension: 'system', status: 'error', channel: 'refreshed' });
  });

  test('a refused access_token closes the channel', async () => {
    const ada = await signedIn(server);
    const channel = ada.client.channel('refused');
    const seen = watch(channel);
    await until(() => seen.statuses.includes('SUBSCRIBED'));
    await ada.client.realtime.setAuth('not.a.token');
    await until(() => seen.statuses.includes('CLOSED'));
    expect(seen.system[0]).toMatchObject({ extension: 'system', status: 'error', channel: 'refused' });
    expect(String(seen.system[0]!.message)).toMatch(/invalid JWT/);
  });
});
