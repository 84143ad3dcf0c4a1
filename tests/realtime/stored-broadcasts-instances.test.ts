// Broadcasts from the database with three instances on one database: each instance's subscribers
// get every message once, in the same order (the order transactions wrote them), with no relay
// between instances; and retention deletes stored messages past the window, keeping newer ones.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RealtimeChannel } from '@supabase/supabase-js';
import { startTestServer, type TestServer } from '../support/server.js';
import { realtimeClient, signedIn, sleep, subscribe } from './support.js';

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not seen in time: ${what}`);
    await sleep(25);
  }
}

function numbers(channel: RealtimeChannel): number[] {
  const list: number[] = [];
  channel.on('broadcast', { event: '*' }, (message) => list.push((message.payload as { n: number }).n));
  return list;
}

describe('three instances', () => {
  const servers: TestServer[] = [];

  beforeAll(async () => {
    const first = await startTestServer();
    servers.push(first);
    for (let i = 0; i < 2; i += 1) {
      servers.push(
        await startTestServer({
          DATABASE_URL: first.config.databaseUrl!,
          JWT_SECRET: first.config.jwtSecret,
          PROJECT_API_KEY: first.config.projectApiKey,
          SERVICE_ROLE_KEY: first.config.serviceRoleKey,
          PAYMENT_WEBHOOK_SECRET: first.config.paymentWebhookSecret,
          CRON_SECRET: first.config.cronSecret,
        }),
      );
    }
    await first.pool.query(`
      create policy "everyone signed in reads the lobby" on realtime.messages for select to authenticated
        using (realtime.topic() = 'lobby');`);
  });
  afterAll(async () => {
    for (const server of servers.reverse()) await server.close();
  });

  test('every instance delivers each message once, in the order the transactions wrote them', async () => {
    const privateGot: number[][] = [];
    const publicGot: number[][] = [];
    const clients = [];
    for (const server of servers) {
      const user = await signedIn(server);
      clients.push(user.client);
      const privateChannel = user.client.channel('lobby', { config: { private: true } });
      const publicChannel = realtimeClient(server).channel('lobby');
      privateGot.push(numbers(privateChannel));
      publicGot.push(numbers(publicChannel));
      for (const channel of [privateChannel, publicChannel])
        expect((await subscribe(channel)).status).toBe('SUBSCRIBED');
    }
    // Four writers at once, each sending five messages in five transactions, through every instance's pool.
    const writers = [0, 1, 2, 3].map(async (w) => {
      const pool = servers[w % servers.length]!.pool;
      for (let i = 0; i < 5; i += 1) {
        await pool.query(`select realtime.send(jsonb_build_object('n', $1::int), 'n', 'lobby')`, [
          w * 100 + i,
        ]);
      }
    });
    await Promise.all(writers);
    await servers[0]!.pool.query(`select realtime.send('{"n": -1}'::jsonb, 'n', 'lobby', false)`);
    await until(() => privateGot.every((list) => list.length >= 20), 'twenty messages on every instance');
    await until(() => publicGot.every((list) => list.length >= 1), 'the public message on every instance');
    await sleep(400);
    const { rows } = await servers[0]!.pool.query<{ n: number }>(
      `select (payload->>'n')::int as n from realtime.messages where topic = 'lobby' and private order by txid, seq`,
    );
    expect(rows).toHaveLength(20);
    const stored = rows.map((r) => r.n);
    for (const list of privateGot) expect(list).toEqual(stored);
    for (const list of publicGot) expect(list).toEqual([-1]);
    for (const client of clients) await client.removeAllChannels();
  });
});

describe('retention', () => {
  let server: TestServer;

  beforeAll(async () => {
    // Pruning runs every half window: every 2 s here.
    server = await startTestServer({ REALTIME_MESSAGES_RETENTION_MS: '4000' });
  });
  afterAll(async () => server?.close());

  test('messages older than the window are deleted; newer ones are kept', async () => {
    await server.pool.query(`select realtime.send('{"n": 1}'::jsonb, 'old', 'kept-a-while')`);
    await server.pool.query(
      `update realtime.messages set inserted_at = inserted_at - interval '1 hour' where event = 'old'`,
    );
    await server.pool.query(`select realtime.send('{"n": 2}'::jsonb, 'new', 'kept-a-while')`);
    const events = async () =>
      (
        await server.pool.query<{ event: string }>(
          `select event from realtime.messages where topic = 'kept-a-while' order by seq`,
        )
      ).rows.map((r) => r.event);
    expect(await events()).toEqual(['old', 'new']);
    const deadline = Date.now() + 3500;
    while ((await events()).includes('old')) {
      if (Date.now() > deadline) throw new Error('the old message was not deleted in time');
      await sleep(100);
    }
    expect(await events()).toEqual(['new']);
  });
});
