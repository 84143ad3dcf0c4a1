// postgres_changes across instances and reconnections: three instances on one database each tail
// the outbox and deliver a change once to their own subscribers; a subscription that comes back
// (realtime-js rejoining with the same session, topic and bindings, on the same instance or
// another) is given what it missed once and in order before live changes; one that was away
// longer than changes are kept is told so by a system message.
import type { RealtimeChannel, SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';
import { realtimeClient, sleep } from './support.js';

let one: TestServer;
let two: TestServer;
let three: TestServer;
let ada: SignedIn;
let wsA: string;

beforeAll(async () => {
  one = await startTestServer();
  const shared = {
    DATABASE_URL: one.config.databaseUrl!,
    JWT_SECRET: one.config.jwtSecret,
    PROJECT_API_KEY: one.config.projectApiKey,
    SERVICE_ROLE_KEY: one.config.serviceRoleKey,
    PAYMENT_WEBHOOK_SECRET: one.config.paymentWebhookSecret,
    CRON_SECRET: one.config.cronSecret,
  };
  // The third keeps changes for 1.5 s only, so a subscription can outlast the window.
  [two, three] = await Promise.all([
    startTestServer(shared),
    startTestServer({ ...shared, REALTIME_CHANGES_RETENTION_MS: '1500' }),
  ]);
  ada = await signUp(one, 'ada');
  wsA = await workspace(one, ada, 'Alpha');
  await one.pool.query(`
    create table public.rt_items (
      id bigint generated always as identity primary key,
      workspace_id uuid not null,
      n integer not null
    );
    alter table public.rt_items enable row level security;
    create policy rt_items_read on public.rt_items for select to authenticated
      using (workspace_id = any ((select tenantry.workspace_ids())::uuid[]));
    grant select on public.rt_items to authenticated;
    select realtime.enable_changes('public.rt_items');`);
});
afterAll(async () => {
  await Promise.all([three?.close(), two?.close()]);
  await one?.close();
});

async function write(...ns: number[]): Promise<void> {
  for (const n of ns) {
    await one.pool.query('insert into public.rt_items (workspace_id, n) values ($1, $2)', [wsA, n]);
  }
}

async function until(predicate: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('not seen in time');
    await sleep(20);
  }
}

interface Listener {
  client: SupabaseClient;
  channel: RealtimeChannel;
  got: number[];
  system: { status: string; message: string }[];
}

/** Ada's subscription to rt_items on `server` (the same topic and bindings every time). */
async function listen(server: TestServer, topic = 'items'): Promise<Listener> {
  const client = realtimeClient(server);
  client.realtime.setAuth(ada.accessToken);
  const got: number[] = [];
  const system: { status: string; message: string }[] = [];
  const channel = client
    .channel(topic)
    .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'rt_items' }, (p) =>
      got.push((p.new as { n: number }).n),
    )
    .on('system', {}, (p: { status: string; message: string }) => system.push(p));
  channel.subscribe();
  await until(() => system.length > 0);
  return { client, channel, got, system };
}

test('three instances each deliver a change once to their own subscribers', async () => {
  const listeners = await Promise.all([one, two, three].map((server) => listen(server, 'fan-out')));
  await write(1, 2, 3);
  await until(() => listeners.every((l) => l.got.length >= 3));
  await sleep(500);
  for (const l of listeners) expect(l.got).toEqual([1, 2, 3]);
  for (const l of listeners) await l.client.removeAllChannels();
});

test('a client that reconnects is given what it missed, once and in order, before live changes', async () => {
  const first = await listen(one, 'resume-same');
  await write(10);
  await until(() => first.got.length === 1);
  await sleep(300);
  first.client.realtime.disconnect();
  await sleep(200);
  await write(11, 12, 13);
  first.client.realtime.connect();
  await until(() => first.got.length >= 4);
  await write(14);
  await until(() => first.got.length >= 5);
  await sleep(500);
  expect(first.got).toEqual([10, 11, 12, 13, 14]);
  await first.client.removeAllChannels();
});

test('the same subscription coming back through another instance resumes there', async () => {
  const before = await listen(one, 'resume-across');
  await write(20);
  await until(() => before.got.length === 1);
  await sleep(300);
  await before.client.removeAllChannels();
  await sleep(200);
  await write(21, 22);
  const after = await listen(two, 'resume-across');
  await until(() => after.got.length >= 2);
  await write(23);
  await until(() => after.got.length >= 3);
  await sleep(500);
  expect(after.got).toEqual([21, 22, 23]);
  expect(after.system[0]).toMatchObject({ status: 'ok', message: 'Subscribed to PostgreSQL' });
  await after.client.removeAllChannels();
});

test('a subscription away longer than changes are kept is told to fetch again', async () => {
  const before = await listen(three, 'resume-late');
  await write(30);
  await until(() => before.got.length === 1);
  await sleep(300);
  await before.client.removeAllChannels();
  await write(31);
  // Past the window (1.5 s) and the next pruning (every second).
  await sleep(3500);
  const after = await listen(three, 'resume-late');
  await until(() => after.system.length >= 2);
  expect(after.system[0]).toMatchObject({ status: 'ok', message: 'Subscribed to PostgreSQL' });
  expect(after.system[1]).toMatchObject({ status: 'error' });
  expect(after.system[1]!.message).toMatch(/^Changes were missed/);
  expect(after.got).toEqual([]);
  await write(32);
  await until(() => after.got.length === 1);
  expect(after.got).toEqual([32]);
  await after.client.removeAllChannels();
});
