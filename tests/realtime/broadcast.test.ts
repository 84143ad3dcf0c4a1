// Broadcast with supabase-js's own channel(), on both protocol versions: between two clients,
// the sender left out unless `self`, acknowledgements, bytes (2.0.0), the REST endpoints
// (send() before a join, httpSend) and their refusals; and presence: sync, join and leave.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RealtimeChannel, SupabaseClient } from '@supabase/supabase-js';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { first, realtimeClient, sleep, subscribe, type Vsn } from './support.js';

let server: TestServer;
const clients: SupabaseClient[] = [];

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  for (const client of clients) await client.removeAllChannels();
  await server?.close();
});

function client(vsn: Vsn): SupabaseClient {
  const made = realtimeClient(server, { vsn });
  clients.push(made);
  return made;
}

let rooms = 0;
const room = () => `room-${Date.now()}-${(rooms += 1)}`;

describe.each(['1.0.0', '2.0.0'] as const)('vsn %s', (vsn) => {
  test('a broadcast reaches the other client; the sender hears itself only with self', async () => {
    const name = room();
    const a = client(vsn).channel(name);
    const b = client(vsn).channel(name, { config: { broadcast: { self: true } } });
    const toA: unknown[] = [];
    const toB: unknown[] = [];
    a.on('broadcast', { event: 'note' }, (message) => toA.push(message));
    b.on('broadcast', { event: 'note' }, (message) => toB.push(message));
    expect((await subscribe(a)).status).toBe('SUBSCRIBED');
    expect((await subscribe(b)).status).toBe('SUBSCRIBED');

    // Without ack, send resolves at once.
    expect(await a.send({ type: 'broadcast', event: 'note', payload: { text: 'from a', n: 1 } })).toBe('ok');
    expect(await b.send({ type: 'broadcast', event: 'note', payload: { text: 'from b' } })).toBe('ok');
    await sleep(300);
    expect(toB).toEqual([
      { type: 'broadcast', event: 'note', payload: { text: 'from a', n: 1 } },
      { type: 'broadcast', event: 'note', payload: { text: 'from b' } },
    ]);
    expect(toA).toEqual([{ type: 'broadcast', event: 'note', payload: { text: 'from b' } }]);
  });

  test('with ack, the server acknowledges each broadcast', async () => {
    const name = room();
    const sender = client(vsn).channel(name, { config: { broadcast: { ack: true } } });
    const receiver = client(vsn).channel(name);
    const received = first<unknown>((deliver) => receiver.on('broadcast', { event: 'acked' }, deliver));
    expect((await subscribe(sender)).status).toBe('SUBSCRIBED');
    expect((await subscribe(receiver)).status).toBe('SUBSCRIBED');
    expect(await sender.send({ type: 'broadcast', event: 'acked', payload: { ok: true } })).toBe('ok');
    expect(await received).toMatchObject({ event: 'acked', payload: { ok: true } });
  });

  test('send() on a channel not joined goes over REST, and httpSend reaches joined clients', async () => {
    const name = room();
    const receiver = client(vsn).channel(name);
    const messages: unknown[] = [];
    receiver.on('broadcast', { event: '*' }, (message) => messages.push(message));
    expect((await subscribe(receiver)).status).toBe('SUBSCRIBED');
    const outsider = client(vsn).channel(name);
    expect(await outsider.send({ type: 'broadcast', event: 'rest', payload: { via: 'batch' } })).toBe('ok');
    expect(await outsider.httpSend('single', { via: 'httpSend' })).toEqual({ success: true });
    await sleep(300);
    expect(messages).toEqual([
      { type: 'broadcast', event: 'rest', payload: { via: 'batch' } },
      { type: 'broadcast', event: 'single', payload: { via: 'httpSend' } },
    ]);
  });

  test('presence: the joiner gets the state, others get joins and leaves', async () => {
    const name = room();
    const first_ = client(vsn).channel(name, { config: { presence: { key: 'ada' } } });
    const syncs: string[][] = [];
    const joins: string[] = [];
    const leaves: string[] = [];
    first_.on('presence', { event: 'sync' }, () => syncs.push(Object.keys(first_.presenceState()).sort()));
    first_.on('presence', { event: 'join' }, ({ key }) => joins.push(key));
    first_.on('presence', { event: 'leave' }, ({ key }) => leaves.push(key));
    expect((await subscribe(first_)).status).toBe('SUBSCRIBED');
    expect(await first_.track({ status: 'online' })).toBe('ok');

    const secondClient = client(vsn);
    const second: RealtimeChannel = secondClient.channel(name, { config: { presence: { key: 'grace' } } });
    const synced = first<void>((deliver) => second.on('presence', { event: 'sync' }, () => deliver()));
    expect((await subscribe(second)).status).toBe('SUBSCRIBED');
    await synced;
    // The newcomer sees who was already there, with the tracked state.
    expect(second.presenceState()).toEqual({
      ada: [{ presence_ref: expect.any(String) as unknown, status: 'online' }],
    });
    expect(await second.track({ status: 'busy' })).toBe('ok');
    await sleep(300);
    expect(Object.keys(first_.presenceState()).sort()).toEqual(['ada', 'grace']);
    expect(first_.presenceState().grace).toEqual([
      { presence_ref: expect.any(String) as unknown, status: 'busy' },
    ]);
    expect(joins).toEqual(['ada', 'grace']);

    await secondClient.removeChannel(second);
    await sleep(300);
    expect(leaves).toEqual(['grace']);
    expect(Object.keys(first_.presenceState())).toEqual(['ada']);
    expect(syncs.at(-1)).toEqual(['ada']);
  });
});

test('2.0.0: bytes are broadcast as bytes, over the socket and over httpSend', async () => {
  const name = room();
  const sender = client('2.0.0').channel(name);
  const receiver = client('2.0.0').channel(name);
  const received: unknown[] = [];
  receiver.on('broadcast', { event: 'bytes' }, (message) => received.push(message.payload));
  expect((await subscribe(sender)).status).toBe('SUBSCRIBED');
  expect((await subscribe(receiver)).status).toBe('SUBSCRIBED');
  await sender.send({ type: 'broadcast', event: 'bytes', payload: new Uint8Array([1, 2, 255]).buffer });
  await sender.httpSend('bytes', new Uint8Array([9, 8]));
  await sleep(300);
  expect(received.map((payload) => [...new Uint8Array(payload as ArrayBuffer)])).toEqual([
    [1, 2, 255],
    [9, 8],
  ]);
});

test('the REST endpoints refuse a bad key, a bad token and bad bodies, and send nothing then', async () => {
  const name = room();
  const receiver = client('2.0.0').channel(name);
  const messages: unknown[] = [];
  receiver.on('broadcast', { event: '*' }, (message) => messages.push(message));
  expect((await subscribe(receiver)).status).toBe('SUBSCRIBED');
  const good = { messages: [{ topic: name, event: 'e', payload: { x: 1 } }] };
  const badKey = await call(server, 'POST', '/realtime/v1/api/broadcast', { body: good, apikey: 'wrong' });
  expect(badKey.status).toBe(401);
  const badToken = await call(server, 'POST', '/realtime/v1/api/broadcast', {
    body: good,
    headers: { authorization: 'Bearer not.a.token' },
  });
  expect(badToken.status).toBe(401);
  for (const body of [
    {},
    { messages: 'x' },
    { messages: [{ topic: name }] },
    { messages: [good.messages[0], { event: 'e' }] },
  ]) {
    const refused = await call(server, 'POST', '/realtime/v1/api/broadcast', { body });
    expect(refused.status, JSON.stringify(body)).toBe(422);
    expect(refused.body.message).toEqual(expect.any(String));
  }
  const notJson = await call(server, 'POST', `/realtime/v1/api/broadcast/${name}/events/e`, { rawBody: '{' });
  expect(notJson.status).toBe(400);
  const ok = await call(server, 'POST', '/realtime/v1/api/broadcast', { body: good });
  expect(ok.status).toBe(202);
  expect(ok.text).toBe('');
  await sleep(300);
  // Only the accepted request was delivered.
  expect(messages).toEqual([{ type: 'broadcast', event: 'e', payload: { x: 1 } }]);
});
