// Workspace API keys on channels already open (decision 0091): revoking a key, its expiry, or its
// creator leaving the workspace closes the key's channels on every instance within
// REALTIME_KEY_CHECK_MS with a system message and phx_close, after which they receive nothing; a
// person's channel on the same topic and instance keeps going; a creator's demotion has the key's
// private channels judged again; and one query checks all of an instance's key channels.
import type { RealtimeChannel, SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Pool } from '../../src/server/db/pool.js';
import { createLogger } from '../../src/server/logger.js';
import { KeyWatch } from '../../src/server/realtime/key-watch.js';
import type { Channel } from '../../src/server/realtime/topics.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';
import { realtimeClient, sleep } from './support.js';

const CHECK_MS = 300;

let one: TestServer;
let two: TestServer;
let owner: SignedIn;
let admin: SignedIn;
let mine: string;
const clients: SupabaseClient[] = [];

beforeAll(async () => {
  one = await startTestServer({ REALTIME_KEY_CHECK_MS: String(CHECK_MS) });
  two = await startTestServer({
    DATABASE_URL: one.config.databaseUrl!,
    JWT_SECRET: one.config.jwtSecret,
    PROJECT_API_KEY: one.config.projectApiKey,
    SERVICE_ROLE_KEY: one.config.serviceRoleKey,
    PAYMENT_WEBHOOK_SECRET: one.config.paymentWebhookSecret,
    CRON_SECRET: one.config.cronSecret,
    REALTIME_KEY_CHECK_MS: String(CHECK_MS),
  });
  owner = await signUp(one, 'rt-keys-owner');
  admin = await signUp(one, 'rt-keys-admin');
  mine = await workspace(one, owner, 'Live Keys Co', [[admin, 'admin']]);
});
afterAll(async () => {
  for (const client of clients) await client.removeAllChannels();
  await two?.close();
  await one?.close();
});

async function createKey(
  by: SignedIn,
  args: { role?: string; expires_at?: string } = {},
): Promise<{ id: string; key: string }> {
  const { data, error } = await by.client.rpc('create_api_key', {
    workspace_id: mine,
    name: 'Live feed',
    role: 'member',
    ...args,
  });
  if (error) throw new Error(`create_api_key failed: ${error.message}`);
  return data as { id: string; key: string };
}

/** A private channel on the workspace's topic, recording broadcasts, statuses and system messages. */
async function listen(server: TestServer, token: string, topic = `workspace:${mine}`) {
  const client = realtimeClient(server);
  clients.push(client);
  await client.realtime.setAuth(token);
  const channel: RealtimeChannel = client.channel(topic, { config: { private: true } });
  const seen = { received: [] as unknown[], statuses: [] as string[], system: [] as unknown[] };
  channel.on('broadcast', { event: 'tick' }, (message) => seen.received.push(message.payload));
  channel.on('system', {}, (payload: unknown) => seen.system.push(payload));
  const joined = await new Promise<{ status: string; error?: Error }>((resolve) => {
    channel.subscribe((status, error) => {
      seen.statuses.push(status);
      resolve({ status, error });
    });
  });
  expect(joined.error?.message).toBeUndefined();
  expect(joined.status).toBe('SUBSCRIBED');
  return { client, channel, seen };
}

async function until(check: () => boolean, ms: number): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > ms) throw new Error(`condition not met within ${ms} ms`);
    await sleep(20);
  }
  return Date.now() - started;
}

/** The owner broadcasts on the workspace's private channel from the other instance. */
async function sender() {
  const listener = await listen(one, owner.accessToken);
  return (n: number) => listener.channel.send({ type: 'broadcast', event: 'tick', payload: { n } });
}

test('a revoked key’s open channel is closed within the check interval, on another instance', async () => {
  const send = await sender();
  const { id, key } = await createKey(owner);
  const byKey = await listen(two, key);
  const person = await listen(two, owner.accessToken);
  await send(1);
  await until(() => byKey.seen.received.length === 1 && person.seen.received.length === 1, 3000);

  const { error } = await owner.client.rpc('revoke_api_key', { key_id: id });
  expect(error).toBeNull();
  const took = await until(() => byKey.seen.statuses.includes('CLOSED'), CHECK_MS * 2 + 1000);
  expect(took).toBeLessThan(CHECK_MS * 2 + 1000);
  expect(byKey.seen.system).toEqual([
    { extension: 'system', status: 'error', message: 'Invalid API key', channel: `workspace:${mine}` },
  ]);

  await send(2);
  await until(() => person.seen.received.length === 2, 3000);
  await sleep(300);
  expect(person.seen.received).toEqual([{ n: 1 }, { n: 2 }]);
  expect(person.seen.statuses).not.toContain('CLOSED');
  expect(byKey.seen.received).toEqual([{ n: 1 }]);
});

test('a key whose creator leaves the workspace loses its open channel', async () => {
  const send = await sender();
  const { key } = await createKey(admin);
  const byKey = await listen(two, key);
  await send(1);
  await until(() => byKey.seen.received.length === 1, 3000);

  await one.pool.query('delete from public.workspace_members where workspace_id = $1 and user_id = $2', [
    mine,
    admin.id,
  ]);
  await until(() => byKey.seen.statuses.includes('CLOSED'), CHECK_MS * 2 + 1000);
  expect(byKey.seen.system).toMatchObject([{ status: 'error', message: 'Invalid API key' }]);
  await send(2);
  await sleep(500);
  expect(byKey.seen.received).toEqual([{ n: 1 }]);
});

test('an expired key’s open channel is closed once it expires', async () => {
  const { key } = await createKey(owner, { expires_at: new Date(Date.now() + 1500).toISOString() });
  const byKey = await listen(two, key);
  expect(byKey.seen.statuses).toEqual(['SUBSCRIBED']);
  await until(() => byKey.seen.statuses.includes('CLOSED'), 1500 + CHECK_MS * 2 + 1000);
  expect(byKey.seen.system).toMatchObject([{ status: 'error', message: 'Invalid API key' }]);
});

test('a key whose creator is demoted has its private channel judged again at its new role', async () => {
  // Only admins (people or keys at admin) read a workspace's admin room.
  await one.pool.query(`
    create policy "admins room" on realtime.messages for select to authenticated
      using ((select realtime.topic()) = any (
        select 'admins:' || w::text from unnest((select tenantry.workspace_ids('admin'))) as w));`);
  const lead = await signUp(one, 'rt-keys-lead');
  await one.pool.query(
    `insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, 'admin')`,
    [mine, lead.id],
  );
  const { key } = await createKey(lead, { role: 'admin' });
  const admins = await listen(two, key, `admins:${mine}`);
  const everyone = await listen(two, key);
  await one.pool.query(
    `update public.workspace_members set role = 'member' where workspace_id = $1 and user_id = $2`,
    [mine, lead.id],
  );
  await until(() => admins.seen.statuses.includes('CLOSED'), CHECK_MS * 2 + 1000);
  expect(admins.seen.system).toEqual([
    {
      extension: 'system',
      status: 'error',
      message: `You no longer have permission to read from this Channel topic: admins:${mine}`,
      channel: `admins:${mine}`,
    },
  ]);
  // Still a member's key: the workspace's own channel stays open.
  await sleep(CHECK_MS * 2);
  expect(everyone.seen.statuses).toEqual(['SUBSCRIBED']);
});

test('one query checks every key channel of an instance, whatever their number', async () => {
  const kept = await createKey(owner);
  const gone = await createKey(owner);
  await owner.client.rpc('revoke_api_key', { key_id: gone.id });
  // Channels as a socket holds them: many per key, and one of a person, which is not asked about.
  const channelOf = (caller: Channel['caller']['caller'], topic: string) =>
    ({ topic, name: topic, private: false, caller: { caller, exp: null } }) as unknown as Channel;
  const keyCaller = (id: string) =>
    ({
      kind: 'user',
      claims: { role: 'authenticated', api_key_id: id, app_metadata: { api_key_role: 'member' } },
      token: 'tnt_',
    }) as unknown as Channel['caller']['caller'];
  const channels = Array.from({ length: 50 }, (_, i) =>
    channelOf(keyCaller(i % 2 ? kept.id : gone.id), `t${i}`),
  );
  channels.push(
    channelOf({ kind: 'user', claims: { role: 'authenticated' }, token: 'x' } as never, 'person'),
  );
  let queries = 0;
  const counted = {
    query: (...args: unknown[]) => {
      queries += 1;
      return (one.pool.query as (...a: unknown[]) => unknown)(...args);
    },
  } as unknown as Pool;
  const closed: string[] = [];
  const watch = new KeyWatch({
    pool: counted,
    logger: createLogger('silent'),
    channels: () => channels,
    shutDown: (channel, reason) => closed.push(`${channel.topic} ${reason}`),
    rejudge: () => Promise.resolve(),
  });
  await watch.check();
  expect(queries).toBe(1);
  expect(closed).toEqual(
    channels.filter((_, i) => i < 50 && i % 2 === 0).map((c) => `${c.topic} Invalid API key`),
  );
  // With no key channel at all, nothing is asked.
  await new KeyWatch({
    pool: counted,
    logger: createLogger('silent'),
    channels: () => [],
    shutDown: () => undefined,
    rejudge: () => Promise.resolve(),
  }).check();
  expect(queries).toBe(1);
});
