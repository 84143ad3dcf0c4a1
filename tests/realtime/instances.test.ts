// Two instances on one database, as behind a load balancer: a broadcast sent to one reaches the
// clients of the other (JSON, a payload far over NOTIFY's 8000 bytes, bytes, REST), the sender's
// own instance does not deliver it twice, and a private channel's readers are still decided on
// the instance that holds them.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { realtimeClient, signedIn, sleep, subscribe } from './support.js';

let one: TestServer;
let two: TestServer;

beforeAll(async () => {
  one = await startTestServer();
  two = await startTestServer({
    DATABASE_URL: one.config.databaseUrl!,
    JWT_SECRET: one.config.jwtSecret,
    PROJECT_API_KEY: one.config.projectApiKey,
    SERVICE_ROLE_KEY: one.config.serviceRoleKey,
    PAYMENT_WEBHOOK_SECRET: one.config.paymentWebhookSecret,
    CRON_SECRET: one.config.cronSecret,
  });
  await one.pool.query(`
    create policy "read own room" on realtime.messages for select to authenticated
      using (realtime.topic() = 'room-' || (select auth.uid())::text);`);
});
afterAll(async () => {
  await two?.close();
  await one?.close();
});

test('a broadcast on one instance reaches the clients of the other, once', async () => {
  const sender = realtimeClient(one).channel('across', { config: { broadcast: { self: true } } });
  const local = realtimeClient(one).channel('across');
  const remote = realtimeClient(two).channel('across');
  const got = { sender: [] as unknown[], local: [] as unknown[], remote: [] as unknown[] };
  sender.on('broadcast', { event: '*' }, (m) => got.sender.push(m.payload));
  local.on('broadcast', { event: '*' }, (m) => got.local.push(m.payload));
  remote.on('broadcast', { event: '*' }, (m) => got.remote.push(m.payload));
  for (const channel of [sender, local, remote]) expect((await subscribe(channel)).status).toBe('SUBSCRIBED');

  const large = { text: 'é'.repeat(60_000) };
  await sender.send({ type: 'broadcast', event: 'small', payload: { n: 1 } });
  await sender.send({ type: 'broadcast', event: 'large', payload: large });
  await sender.send({ type: 'broadcast', event: 'bytes', payload: new Uint8Array([7, 7, 7]).buffer });
  // Messages from different senders have no order between them: the REST one comes after.
  await sleep(500);
  const rest = await call(two, 'POST', '/realtime/v1/api/broadcast', {
    body: { messages: [{ topic: 'across', event: 'rest', payload: { via: 'two' } }] },
  });
  expect(rest.status).toBe(202);
  await sleep(800);
  const shown = (list: unknown[]) =>
    list.map((p) =>
      p instanceof ArrayBuffer
        ? [...new Uint8Array(p)]
        : p === large || (p as { text?: string }).text === large.text
          ? 'large'
          : p,
    );
  const expected = [{ n: 1 }, 'large', [7, 7, 7], { via: 'two' }];
  expect(shown(got.sender)).toEqual(expected);
  expect(shown(got.local)).toEqual(expected);
  expect(shown(got.remote)).toEqual(expected);
});

test('private readers are decided where they are connected', async () => {
  const ada = await signedIn(one);
  const room = `room-${ada.userId}`;
  // Ada listens on the second instance; the service role sends on the first.
  const listener = realtimeClient(two);
  listener.realtime.setAuth(ada.token);
  const channel = listener.channel(room, { config: { private: true } });
  const received: unknown[] = [];
  channel.on('broadcast', { event: '*' }, (m) => received.push(m.payload));
  expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
  const sent = await call(one, 'POST', `/realtime/v1/api/broadcast/${room}/events/e?private=true`, {
    body: { secret: true },
    apikey: one.config.serviceRoleKey,
  });
  expect(sent.status).toBe(202);
  // The public channel of the same name on the first instance hears nothing of it.
  const outsider = realtimeClient(one).channel(room);
  const leaked: unknown[] = [];
  outsider.on('broadcast', { event: '*' }, (m) => leaked.push(m.payload));
  expect((await subscribe(outsider)).status).toBe('SUBSCRIBED');
  await call(one, 'POST', `/realtime/v1/api/broadcast/${room}/events/e?private=true`, {
    body: { secret: 2 },
    apikey: one.config.serviceRoleKey,
  });
  await sleep(800);
  expect(received).toEqual([{ secret: true }, { secret: 2 }]);
  expect(leaked).toEqual([]);
});

test('a NOTIFY that any database role could send is not taken for a broadcast without the signature', async () => {
  const listener = realtimeClient(one).channel('forged');
  const received: unknown[] = [];
  listener.on('broadcast', { event: '*' }, (m) => received.push(m.payload));
  expect((await subscribe(listener)).status).toBe('SUBSCRIBED');
  const wire = {
    key: 'public:realtime:forged',
    topic: 'realtime:forged',
    private: false,
    event: 'e',
    json: { forged: true },
  };
  const encoded = Buffer.from(JSON.stringify(wire)).toString('base64');
  const { createHmac } = await import('node:crypto');
  const wrongKey = createHmac('sha256', 'another secret').update('tenantry realtime relay').digest();
  for (const signature of ['', 'x', createHmac('sha256', wrongKey).update(encoded).digest('base64url')]) {
    await one.pool.query('select pg_notify($1, $2)', [
      'tenantry_realtime',
      `${crypto.randomUUID()}:1:0:1:${encoded}.${signature}`,
    ]);
  }
  // The same message signed as the instances sign goes through: the test forges nothing else.
  const key = createHmac('sha256', one.config.jwtSecret).update('tenantry realtime relay').digest();
  await one.pool.query('select pg_notify($1, $2)', [
    'tenantry_realtime',
    `${crypto.randomUUID()}:1:0:1:${encoded}.${createHmac('sha256', key).update(encoded).digest('base64url')}`,
  ]);
  await sleep(500);
  expect(received).toEqual([{ forged: true }]);
});

test('presence spans instances: state, joins and leaves, and an instance that stops takes its presence along', async () => {
  const third = await startTestServer({
    DATABASE_URL: one.config.databaseUrl!,
    JWT_SECRET: one.config.jwtSecret,
    PROJECT_API_KEY: one.config.projectApiKey,
    SERVICE_ROLE_KEY: one.config.serviceRoleKey,
    PAYMENT_WEBHOOK_SECRET: one.config.paymentWebhookSecret,
    CRON_SECRET: one.config.cronSecret,
  });
  const ada = realtimeClient(one).channel('lounge', { config: { presence: { key: 'ada' } } });
  const leaves: string[] = [];
  ada.on('presence', { event: 'leave' }, ({ key }) => leaves.push(key));
  expect((await subscribe(ada)).status).toBe('SUBSCRIBED');
  expect(await ada.track({ at: 'one' })).toBe('ok');
  await sleep(300);

  const grace = realtimeClient(third).channel('lounge', { config: { presence: { key: 'grace' } } });
  grace.on('presence', { event: 'sync' }, () => undefined);
  expect((await subscribe(grace)).status).toBe('SUBSCRIBED');
  await sleep(300);
  // The newcomer on the other instance sees who was there.
  expect(grace.presenceState()).toEqual({
    ada: [{ presence_ref: expect.any(String) as unknown, at: 'one' }],
  });
  expect(await grace.track({ at: 'third' })).toBe('ok');
  await sleep(500);
  expect(Object.keys(ada.presenceState()).sort()).toEqual(['ada', 'grace']);
  expect(ada.presenceState().grace).toEqual([{ presence_ref: expect.any(String) as unknown, at: 'third' }]);

  // The instance Grace is on stops: Ada's instance forgets her at once.
  await third.close();
  await sleep(500);
  expect(leaves).toEqual(['grace']);
  expect(Object.keys(ada.presenceState())).toEqual(['ada']);
});
