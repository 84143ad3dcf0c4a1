// Broadcast from the database: realtime.send reaching private subscribers its topic's policies let
// read (and no one else), public sends, bytes to vsn 2.0.0 clients, broadcast_changes' trigger
// payloads as realtime-js types them, a caller who may not write a topic unable to send or forge
// on it, send never failing the caller's transaction, and replay of stored messages on join.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type pg from 'pg';
import type { RealtimeChannel } from '@supabase/supabase-js';
import { startTestServer, type TestServer } from '../support/server.js';
import { RawSocket, realtimeClient, signedIn, sleep, subscribe } from './support.js';

interface Received {
  event: string;
  payload: unknown;
  meta?: { id?: string; replayed?: boolean };
}

function collect(channel: RealtimeChannel): Received[] {
  const list: Received[] = [];
  channel.on('broadcast', { event: '*' }, (message) => list.push(message as unknown as Received));
  return list;
}

async function until(check: () => boolean, what: string | (() => string), ms = 8000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`not seen in time: ${typeof what === 'string' ? what : what()}`);
    await sleep(25);
  }
}

let server: TestServer;

/** Runs `statements` as a signed-in user would through the data API (role and claims set). */
async function asUser(
  userId: string,
  run: (client: pg.PoolClient) => Promise<void>,
): Promise<{ notices: string[] }> {
  const client = await server.pool.connect();
  const notices: string[] = [];
  const onNotice = (notice: { message?: string }) => notices.push(notice.message ?? '');
  client.on('notice', onNotice);
  try {
    await client.query('begin');
    await client.query(
      `select set_config('request.jwt.claims', $1, true), set_config('request.jwt.claim.sub', $2, true),
              set_config('role', 'authenticated', true)`,
      [JSON.stringify({ sub: userId, role: 'authenticated' }), userId],
    );
    await run(client);
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  } finally {
    client.off('notice', onNotice);
    client.release();
  }
  return { notices };
}

beforeAll(async () => {
  server = await startTestServer();
  // Everyone signed in reads 'lobby'; a user's own room ('room-<id>') is theirs to read and write.
  await server.pool.query(`
    create policy "read lobby and own room" on realtime.messages for select to authenticated
      using (realtime.topic() = 'lobby' or realtime.topic() = 'room-' || (select auth.uid())::text);
    create policy "write own room" on realtime.messages for insert to authenticated
      with check (realtime.topic() = 'room-' || (select auth.uid())::text);
  `);
});
afterAll(async () => server?.close());

describe('realtime.send', () => {
  test('reaches private subscribers the policies let read, with its id as meta.id; nobody else', async () => {
    const ada = await signedIn(server);
    const grace = await signedIn(server);
    const adaLobby = ada.client.channel('lobby', { config: { private: true } });
    const graceLobby = grace.client.channel('lobby', { config: { private: true } });
    const publicLobby = realtimeClient(server).channel('lobby');
    const got = { ada: collect(adaLobby), grace: collect(graceLobby), public: collect(publicLobby) };
    for (const channel of [adaLobby, graceLobby, publicLobby])
      expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
    // Grace's room is hers alone: Ada is refused at the join and hears nothing of it.
    const adaInGraceRoom = ada.client.channel(`room-${grace.userId}`, { config: { private: true } });
    const refusedGot = collect(adaInGraceRoom);
    expect((await subscribe(adaInGraceRoom)).status).toBe('CHANNEL_ERROR');
    const graceRoom = grace.client.channel(`room-${grace.userId}`, { config: { private: true } });
    const roomGot = collect(graceRoom);
    expect((await subscribe(graceRoom)).status).toBe('SUBSCRIBED');

    await server.pool.query(`select realtime.send(jsonb_build_object('n', 1), 'news', 'lobby')`);
    await server.pool.query(`select realtime.send('{"n": 2}'::jsonb, 'secret', $1)`, [
      `room-${grace.userId}`,
    ]);
    await until(() => got.ada.length === 1 && got.grace.length === 1 && roomGot.length === 1, 'deliveries');
    const [message] = got.ada;
    expect(message?.event).toBe('news');
    const stored = await server.pool.query<{ id: string }>(
      `select id from realtime.messages where topic = 'lobby' and event = 'news'`,
    );
    // payload.id is added as on Supabase; the row's id is also meta.id.
    expect(message?.payload).toEqual({ n: 1, id: stored.rows[0]!.id });
    expect(message?.meta).toEqual({ id: stored.rows[0]!.id });
    expect(got.grace.map((m) => m.payload)).toEqual(got.ada.map((m) => m.payload));
    expect(roomGot.map((m) => m.event)).toEqual(['secret']);
    await sleep(300);
    // A public channel of the same name is another topic; a refused join hears nothing.
    expect(got.public).toEqual([]);
    expect(refusedGot).toEqual([]);
    expect(got.ada).toHaveLength(1);
    for (const client of [ada.client, grace.client]) await client.removeAllChannels();
  });

  test('private => false reaches the public channel of the topic, not its private one', async () => {
    const ada = await signedIn(server);
    const privateLobby = ada.client.channel('lobby', { config: { private: true } });
    const publicLobby = realtimeClient(server).channel('lobby');
    const got = { private: collect(privateLobby), public: collect(publicLobby) };
    for (const channel of [privateLobby, publicLobby])
      expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
    await server.pool.query(`select realtime.send('{"open": true}'::jsonb, 'open', 'lobby', false)`);
    await until(() => got.public.length === 1, 'the public delivery');
    expect(got.public[0]?.payload).toMatchObject({ open: true });
    await sleep(300);
    expect(got.private).toEqual([]);
    await ada.client.removeAllChannels();
  });

  test('bytes reach vsn 2.0.0 clients as binary; a 1.0.0 client cannot receive them', async () => {
    const v2 = await signedIn(server, '2.0.0');
    const v1 = await signedIn(server, '1.0.0');
    const two = v2.client.channel('lobby', { config: { private: true } });
    const one = v1.client.channel('lobby', { config: { private: true } });
    const got = { two: collect(two), one: collect(one) };
    for (const channel of [two, one]) expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
    await server.pool.query(`select realtime.send('\\x010203ff'::bytea, 'bytes', 'lobby')`);
    await server.pool.query(`select realtime.send('{"after": true}'::jsonb, 'json', 'lobby')`);
    await until(() => got.two.length === 2 && got.one.length === 1, 'the deliveries');
    const bytes = got.two[0]!.payload;
    expect(bytes).toBeInstanceOf(ArrayBuffer);
    expect([...new Uint8Array(bytes as ArrayBuffer)]).toEqual([1, 2, 3, 255]);
    expect(got.two[0]!.meta?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(got.one.map((m) => m.event)).toEqual(['json']);
    for (const client of [v1.client, v2.client]) await client.removeAllChannels();
  });

  test('a user sends only where their insert policy allows, and cannot forge a row for another topic', async () => {
    const ada = await signedIn(server);
    const grace = await signedIn(server);
    const graceRoom = grace.client.channel(`room-${grace.userId}`, { config: { private: true } });
    const got = collect(graceRoom);
    expect((await subscribe(graceRoom)).status).toBe('SUBSCRIBED');
    const adaRoom = ada.client.channel(`room-${ada.userId}`, { config: { private: true } });
    const adaGot = collect(adaRoom);
    expect((await subscribe(adaRoom)).status).toBe('SUBSCRIBED');

    // Through realtime.send: refused by the policy, a warning, and her transaction goes on.
    const refused = await asUser(ada.userId, async (client) => {
      await client.query(`select realtime.send('{"x": 1}'::jsonb, 'forged', $1)`, [`room-${grace.userId}`]);
      await client.query(`select realtime.send('{"x": 2}'::jsonb, 'mine', $1)`, [`room-${ada.userId}`]);
    });
    expect(refused.notices.join('\n')).toMatch(
      /ErrorSendingBroadcastMessage: new row violates row-level security/,
    );
    // A row written by hand with the topic setting pointing at her own room is refused too.
    await expect(
      asUser(ada.userId, async (client) => {
        await client.query(`select set_config('realtime.topic', $1, true)`, [`room-${ada.userId}`]);
        await client.query(
          `insert into realtime.messages (topic, extension, event, payload, private)
           values ($1, 'broadcast', 'forged', '{}', true)`,
          [`room-${grace.userId}`],
        );
      }),
    ).rejects.toMatchObject({ code: '42501' });
    await until(() => adaGot.length === 1, 'her own message');
    expect(adaGot[0]!.event).toBe('mine');
    await sleep(300);
    expect(got).toEqual([]);
    const rows = await server.pool.query(`select 1 from realtime.messages where topic = $1`, [
      `room-${grace.userId}`,
    ]);
    expect(rows.rowCount).toBe(0);
    for (const client of [ada.client, grace.client]) await client.removeAllChannels();
  });

  test('an error in send is a warning: the caller’s transaction commits', async () => {
    await server.pool.query('create table send_never_fails (id int primary key)');
    const client = await server.pool.connect();
    const notices: string[] = [];
    client.on('notice', (notice: { message?: string }) => notices.push(notice.message ?? ''));
    try {
      await client.query('begin');
      await client.query('insert into send_never_fails values (1)');
      // A null topic violates the table's constraint.
      await client.query(`select realtime.send('{}'::jsonb, 'e', null)`);
      await client.query('insert into send_never_fails values (2)');
      await client.query('commit');
    } finally {
      client.release();
    }
    expect(notices.join('\n')).toMatch(/ErrorSendingBroadcastMessage: .*null value in column "topic"/);
    const { rows } = await server.pool.query<{ id: number }>('select id from send_never_fails order by id');
    expect(rows.map((r) => r.id)).toEqual([1, 2]);
  });
});

describe('a join', () => {
  test('hears only what commits after it, even what an older transaction still holds back', async () => {
    // A transaction that has taken an id and stays open holds every later one back from readers.
    const held = await server.pool.connect();
    try {
      await held.query('begin');
      await held.query('select pg_current_xact_id()');
      await server.pool.query(`select realtime.send('{"n": 1}'::jsonb, 'before', 'held-back', false)`);
      const channel = realtimeClient(server).channel('held-back');
      const got = collect(channel);
      expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
      await held.query('commit');
      await server.pool.query(`select realtime.send('{"n": 2}'::jsonb, 'after', 'held-back', false)`);
      await until(() => got.length > 0, 'the message sent after the join');
      await sleep(300);
      expect(got.map((m) => m.event)).toEqual(['after']);
      await channel.unsubscribe();
    } finally {
      held.release();
    }
  });
});

describe('realtime.broadcast_changes', () => {
  test('a row trigger sends INSERT, UPDATE and DELETE as realtime-js types them', async () => {
    await server.pool.query(`
      create table public.notes (id int primary key, body text not null);
      create function public.notes_broadcast() returns trigger
      language plpgsql security definer set search_path = '' as $$
      begin
        perform realtime.broadcast_changes('lobby', tg_op, tg_op, tg_table_name, tg_table_schema, new, old);
        return null;
      end $$;
      create trigger notes_broadcast after insert or update or delete on public.notes
        for each row execute function public.notes_broadcast();
    `);
    const ada = await signedIn(server);
    const channel = ada.client.channel('lobby', { config: { private: true } });
    const got = collect(channel);
    expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
    await server.pool.query(`insert into public.notes values (1, 'first')`);
    await server.pool.query(`update public.notes set body = 'second' where id = 1`);
    await server.pool.query(`delete from public.notes where id = 1`);
    await until(() => got.length === 3, 'three changes');
    expect(got.map((m) => m.event)).toEqual(['INSERT', 'UPDATE', 'DELETE']);
    const base = { table: 'notes', schema: 'public' };
    expect(got[0]!.payload).toEqual({
      ...base,
      id: got[0]!.meta?.id,
      operation: 'INSERT',
      record: { id: 1, body: 'first' },
      old_record: null,
    });
    expect(got[1]!.payload).toEqual({
      ...base,
      id: got[1]!.meta?.id,
      operation: 'UPDATE',
      record: { id: 1, body: 'second' },
      old_record: { id: 1, body: 'first' },
    });
    expect(got[2]!.payload).toEqual({
      ...base,
      id: got[2]!.meta?.id,
      operation: 'DELETE',
      record: null,
      old_record: { id: 1, body: 'second' },
    });
    await ada.client.removeAllChannels();
  });
});

describe('replay', () => {
  test('a private join hears the newest stored messages since `since`, oldest first, before live ones', async () => {
    const ada = await signedIn(server);
    const topic = `room-${ada.userId}`;
    // Six messages: the first stored "an hour ago", the others now.
    await server.pool.query(`select realtime.send('{"n": 0}'::jsonb, 'old', $1)`, [topic]);
    await server.pool.query(
      `update realtime.messages set inserted_at = inserted_at - interval '1 hour' where topic = $1`,
      [topic],
    );
    const since = Date.now() - 60_000;
    for (let n = 1; n <= 5; n += 1)
      await server.pool.query(`select realtime.send(jsonb_build_object('n', $2::int), 'kept', $1)`, [
        topic,
        n,
      ]);
    const channel = ada.client.channel(topic, {
      config: { private: true, broadcast: { replay: { since, limit: 3 } } },
    });
    const got = collect(channel);
    expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
    await server.pool.query(`select realtime.send('{"n": 6}'::jsonb, 'live', $1)`, [topic]);
    await until(
      () => got.length === 4,
      () => `three replayed and one live; got ${JSON.stringify(got)}`,
    );
    expect(got.map((m) => (m.payload as { n: number }).n)).toEqual([3, 4, 5, 6]);
    expect(got.map((m) => m.meta?.replayed ?? false)).toEqual([true, true, true, false]);
    expect(got.every((m) => typeof m.meta?.id === 'string')).toBe(true);
    await sleep(300);
    expect(got).toHaveLength(4);

    // Without a limit: ten at most; since the start of time, the old one too.
    await ada.client.removeChannel(channel);
    const again = ada.client.channel(topic, {
      config: { private: true, broadcast: { replay: { since: 0 } } },
    });
    const gotAgain = collect(again);
    expect((await subscribe(again)).status).toBe('SUBSCRIBED');
    await until(() => gotAgain.length === 7, 'seven replayed');
    expect(gotAgain.map((m) => (m.payload as { n: number }).n)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    await ada.client.removeAllChannels();
  });

  test('a public channel asking for replay is refused in Supabase’s words', async () => {
    const socket = await RawSocket.open(server, `apikey=${server.config.projectApiKey}&vsn=1.0.0`);
    socket.send({
      topic: 'realtime:lobby',
      event: 'phx_join',
      payload: { config: { broadcast: { replay: { since: 0 } }, private: false } },
      ref: '1',
      join_ref: '1',
    });
    await socket.until((s) => s.json().length > 0);
    expect(socket.json()[0]).toMatchObject({
      event: 'phx_reply',
      payload: {
        status: 'error',
        response: { reason: 'UnableToReplayMessages: Replay is not allowed for public channels' },
      },
    });
    socket.send({
      topic: 'realtime:lobby',
      event: 'phx_join',
      payload: { config: { broadcast: { replay: { since: 'yesterday' } }, private: true } },
      ref: '2',
      join_ref: '2',
    });
    await socket.until((s) => s.json().length > 1);
    expect(socket.json()[1]).toMatchObject({
      payload: {
        status: 'error',
        response: { reason: 'UnableToReplayMessages: Replay params are not valid' },
      },
    });
    socket.close();
  });
});
