// postgres_changes behind a stock PgBouncer in transaction mode (four server connections for two
// instances, no DATABASE_LISTEN_URL, so nothing can LISTEN): each instance reads the outbox
// through the pooler, row-level security is checked there (its prepared statements live and die
// within one transaction), and a subscription that moves to the other instance resumes there.
// Where PgBouncer is not installed the suite says it was skipped; CI (REQUIRE_PGBOUNCER=1) fails.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import pg from 'pg';
import { findPgBouncer, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';
import { realtimeClient, sleep } from './support.js';

const required = process.env.REQUIRE_PGBOUNCER === '1';
const binary = findPgBouncer();
if (!binary && !required) console.warn('PgBouncer: skipped, no pgbouncer binary is installed');

describe.skipIf(!binary && !required)('postgres_changes behind PgBouncer in transaction mode', () => {
  let bouncer: PgBouncer;
  let admin: pg.Client;
  let a: TestServer;
  let b: TestServer;
  let ada: SignedIn;
  let bob: SignedIn;
  let wsA: string;
  let wsB: string;

  beforeAll(async () => {
    if (!binary) throw new Error('REQUIRE_PGBOUNCER=1 but no pgbouncer binary is installed');
    const directUrl = await createTestDatabase();
    bouncer = await startPgBouncer(binary, directUrl, { poolSize: 4 });
    admin = new pg.Client({ connectionString: directUrl });
    await admin.connect();
    const pooled = { DATABASE_URL: bouncer.through(directUrl), DATABASE_POOLER: 'transaction' };
    a = await startTestServer(pooled);
    b = await startTestServer({
      ...pooled,
      JWT_SECRET: a.config.jwtSecret,
      PROJECT_API_KEY: a.config.projectApiKey,
      SERVICE_ROLE_KEY: a.config.serviceRoleKey,
      PAYMENT_WEBHOOK_SECRET: a.config.paymentWebhookSecret,
      CRON_SECRET: a.config.cronSecret,
    });
    ada = await signUp(a, 'ada');
    bob = await signUp(a, 'bob');
    wsA = await workspace(a, ada, 'Alpha');
    wsB = await workspace(a, bob, 'Beta');
    await admin.query(`
      create table public.pooled_items (
        id bigint generated always as identity primary key, workspace_id uuid not null, n integer not null);
      alter table public.pooled_items enable row level security;
      create policy pooled_items_read on public.pooled_items for select to authenticated
        using (workspace_id = any ((select tenantry.workspace_ids())::uuid[]));
      grant select on public.pooled_items to authenticated;
      select realtime.enable_changes('public.pooled_items');`);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await admin?.end();
    await bouncer?.stop();
  });

  async function listen(server: TestServer, who: SignedIn) {
    const client = realtimeClient(server);
    client.realtime.setAuth(who.accessToken);
    const got: number[] = [];
    const system: { status: string; message: string }[] = [];
    client
      .channel('pooled')
      .on('postgres_changes', { event: 'INSERT', schema: 'public', table: 'pooled_items' }, (p) =>
        got.push((p.new as { n: number }).n),
      )
      .on('system', {}, (p: { status: string; message: string }) => system.push(p))
      .subscribe();
    for (const deadline = Date.now() + 5000; system.length === 0 && Date.now() < deadline;) await sleep(20);
    expect(system[0]).toMatchObject({ status: 'ok', message: 'Subscribed to PostgreSQL' });
    return { client, got };
  }

  async function until(predicate: () => boolean): Promise<void> {
    for (const deadline = Date.now() + 5000; !predicate();) {
      if (Date.now() > deadline) throw new Error('not seen in time');
      await sleep(20);
    }
  }

  test('each member receives their own workspace’s changes, and a subscription resumes on the other instance', async () => {
    const adaOnA = await listen(a, ada);
    const bobOnB = await listen(b, bob);
    for (const [workspaceId, n] of [
      [wsA, 1],
      [wsB, 2],
      [wsA, 3],
    ] as const) {
      await admin.query('insert into public.pooled_items (workspace_id, n) values ($1, $2)', [
        workspaceId,
        n,
      ]);
    }
    await until(() => adaOnA.got.length === 2 && bobOnB.got.length === 1);
    await sleep(300);
    expect(adaOnA.got).toEqual([1, 3]);
    expect(bobOnB.got).toEqual([2]);
    await adaOnA.client.removeAllChannels();
    await sleep(200);
    await admin.query('insert into public.pooled_items (workspace_id, n) values ($1, 4), ($1, 5)', [wsA]);
    const adaOnB = await listen(b, ada);
    await until(() => adaOnB.got.length === 2);
    await admin.query('insert into public.pooled_items (workspace_id, n) values ($1, 6)', [wsA]);
    await until(() => adaOnB.got.length === 3);
    await sleep(300);
    expect(adaOnB.got).toEqual([4, 5, 6]);
    await adaOnB.client.removeAllChannels();
    await bobOnB.client.removeAllChannels();
  });
});
