// Behind a stock PgBouncer (Debian's 1.18) in transaction mode, with four server connections for
// two instances of twenty: sign-up, sign-in and refresh through supabase-js, a workspace, data-API
// reads and writes (and hundreds of lists, where a named statement would meet a server connection
// that never prepared it), a signed webhook, a digest run, a schema change made directly that
// both instances see, a third instance listening past the pooler (DATABASE_LISTEN_URL), migrations
// run by two instances at once, and the idle-in-transaction limit.
// Where PgBouncer is not installed the suite says it was skipped; CI (REQUIRE_PGBOUNCER=1) fails.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { migrate } from '../../src/server/db/migrate.js';
import { createPool } from '../../src/server/db/pool.js';
import { withService } from '../../src/server/db/transactions.js';
import { findPgBouncer, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { call, createTestDatabase, startTestServer, type TestServer } from '../support/server.js';
import { checkoutCompleted, deliverEvent, envelope } from '../support/stripe-events.js';

const required = process.env.REQUIRE_PGBOUNCER === '1';
const binary = findPgBouncer();
if (!binary && !required) {
  console.warn('PgBouncer: skipped, no pgbouncer binary is installed (apt-get install pgbouncer)');
}

const PASSWORD = 'correct horse battery';

describe.skipIf(!binary && !required)('behind PgBouncer in transaction mode', () => {
  let bouncer: PgBouncer;
  let directUrl: string;
  let pooledUrl: string;
  let admin: pg.Client;
  let instances: [TestServer, TestServer];

  beforeAll(async () => {
    if (!binary) throw new Error('REQUIRE_PGBOUNCER=1 but no pgbouncer binary is installed');
    directUrl = await createTestDatabase();
    bouncer = await startPgBouncer(binary, directUrl, { poolSize: 4 });
    pooledUrl = bouncer.through(directUrl);
    admin = new pg.Client({ connectionString: directUrl });
    await admin.connect();
    const pooled = {
      DATABASE_URL: pooledUrl,
      DATABASE_POOLER: 'transaction',
      SCHEMA_POLL_INTERVAL_MS: '200',
      // Many sign-ups and sign-ins from one address at once are the point here, not the limiter.
      RATE_LIMIT_SIGNIN_PER_ADDRESS: '1000',
      RATE_LIMIT_SIGNUP_PER_ADDRESS: '1000',
      PASSWORD_HASHES_PER_CALLER: '100',
    };
    const first = await startTestServer(pooled);
    instances = [
      first,
      await startTestServer({
        ...pooled,
        JWT_SECRET: first.config.jwtSecret,
        PROJECT_API_KEY: first.config.projectApiKey,
        SERVICE_ROLE_KEY: first.config.serviceRoleKey,
        PAYMENT_WEBHOOK_SECRET: first.config.paymentWebhookSecret,
        CRON_SECRET: first.config.cronSecret,
      }),
    ];
  });
  afterAll(async () => {
    await Promise.all((instances ?? []).map((i) => i.close()));
    await admin?.end();
    await bouncer?.stop();
  });

  /** A user signed up on one instance and signed in on the other, with their supabase-js client. */
  async function signedIn(label: string) {
    const [a, b] = instances;
    const email = `${label}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const signUp = await a.client().auth.signUp({ email, password: PASSWORD });
    expect(signUp.error).toBeNull();
    const client = b.client();
    const signIn = await client.auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.error).toBeNull();
    return { email, client, session: signIn.data.session!, user: signIn.data.user! };
  }

  test('sign-up, sign-in and refresh through supabase-js on both instances', async () => {
    const [a, b] = instances;
    const { session } = await signedIn('pooled');
    // Each refresh on the other instance than the last: the chain holds across them.
    let refreshToken = session.refresh_token;
    for (let i = 0; i < 6; i++) {
      const client = (i % 2 ? a : b).client();
      const refreshed = await client.auth.refreshSession({ refresh_token: refreshToken });
      expect(refreshed.error).toBeNull();
      expect(refreshed.data.session!.refresh_token).not.toBe(refreshToken);
      refreshToken = refreshed.data.session!.refresh_token;
    }
    // Many sign-ups and sign-ins at once, over both instances and so over every server
    // connection: the identity service's own statements are not named on any of them.
    const emails = Array.from({ length: 16 }, (_, i) => `crowd-${i}-${Date.now()}@example.com`);
    const signUps = await Promise.all(
      emails.map((email, i) => instances[i % 2]!.client().auth.signUp({ email, password: PASSWORD })),
    );
    expect(signUps.map((r) => r.error?.message ?? null)).toEqual(emails.map(() => null));
    const signIns = await Promise.all(
      emails.map((email, i) =>
        instances[(i + 1) % 2]!.client().auth.signInWithPassword({ email, password: PASSWORD }),
      ),
    );
    expect(signIns.map((r) => r.error?.message ?? null)).toEqual(emails.map(() => null));
  });

  test('a workspace, data-API writes and reads, and 400 lists without one statement error', async () => {
    const [a, b] = instances;
    const { client, session } = await signedIn('lists');
    const created = await client.rpc('create_workspace', { name: 'Pooled Co' });
    expect(created.error).toBeNull();
    const workspaceId = (created.data as { id: string }).id;
    const inserted = await client
      .from('projects')
      .insert(Array.from({ length: 30 }, (_, i) => ({ workspace_id: workspaceId, name: `P${i}` })))
      .select('id');
    expect(inserted.status).toBe(201);
    const renamed = await a
      .clientWithToken(session.access_token)
      .from('projects')
      .update({ name: 'Renamed' })
      .eq('name', 'P0')
      .select('name');
    expect(renamed.data).toEqual([{ name: 'Renamed' }]);

    // Lists of several shapes from both instances, sixteen at a time: with named statements a
    // good share of them meets a server connection where the name was never prepared (26000).
    const shapes = [
      '/rest/v1/projects?select=id,name&order=name.asc&limit=20',
      '/rest/v1/projects?select=name,created_at&order=created_at.desc&limit=5',
      `/rest/v1/projects?select=id&workspace_id=eq.${workspaceId}`,
      '/rest/v1/workspaces?select=id,name',
      '/rest/v1/workspace_members?select=role,workspace_id',
    ];
    const failures: string[] = [];
    for (let round = 0; round < 25; round++) {
      const answers = await Promise.all(
        Array.from({ length: 16 }, async (_, i) => {
          const server = (round + i) % 2 ? a : b;
          return call(server, 'GET', shapes[(round + i) % shapes.length]!, {
            headers: { authorization: `Bearer ${session.access_token}` },
          });
        }),
      );
      for (const answer of answers)
        if (answer.status !== 200) failures.push(`${answer.status} ${answer.text}`);
    }
    expect(failures).toEqual([]);
    const listed = await b.clientWithToken(session.access_token).from('projects').select('name');
    expect(listed.data).toHaveLength(30);
    // Row-level security holds through the pooler: another user sees none of it.
    const other = await signedIn('other');
    expect((await other.client.from('projects').select('name')).data).toEqual([]);
  });

  test('a signed webhook applies and a digest run sends, through the pooler', async () => {
    const [a, b] = instances;
    const { client } = await signedIn('billing');
    const created = await client.rpc('create_workspace', { name: 'Pooled Billing' });
    const workspaceId = (created.data as { id: string }).id;
    const delivered = await deliverEvent(
      a,
      envelope('checkout.session.completed', checkoutCompleted(workspaceId, 'cus_pooled', 'sub_pooled')),
    );
    expect(delivered.status).toBe(200);
    expect(delivered.body.outcome).toBe('processed');
    const subscription = await admin.query(
      'select stripe_customer_id from public.subscriptions where workspace_id = $1',
      [workspaceId],
    );
    expect(subscription.rows).toEqual([{ stripe_customer_id: 'cus_pooled' }]);

    await admin.query(`update public.notification_preferences set digest_frequency = 'off'`);
    const reader = await signedIn('reader');
    await admin.query(
      `insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, 'member')`,
      [workspaceId, reader.user.id],
    );
    await admin.query(
      `update public.notification_preferences set digest_frequency = 'weekly' where user_id = $1`,
      [reader.user.id],
    );
    await client.from('projects').insert({ workspace_id: workspaceId, name: 'News' });
    const runs = await Promise.all(
      [a, b].map((server) =>
        call(server, 'POST', '/api/notifications/digest?frequency=weekly', {
          apikey: null,
          headers: { authorization: `Bearer ${server.config.cronSecret}` },
        }),
      ),
    );
    expect(runs.map((r) => r.status)).toEqual([200, 200]);
    expect(runs.reduce((sum, r) => sum + (r.body.sent as number), 0)).toBe(1);
    const mails = await admin.query(`select to_address from internal.outbox where kind = 'digest'`);
    expect(mails.rows).toEqual([{ to_address: reader.email }]);
  });

  /** Whether the instance's data API lists the table (its OpenAPI document comes from its cache). */
  async function listsTable(server: TestServer, table: string): Promise<boolean> {
    const doc = await call(server, 'GET', '/rest/v1/', {
      apikey: server.config.serviceRoleKey,
      headers: { authorization: `Bearer ${server.config.serviceRoleKey}` },
    });
    return Object.keys((doc.body?.paths as Record<string, unknown>) ?? {}).includes(`/${table}`);
  }

  test('a table created directly is seen by both instances without a notice', async () => {
    for (const server of instances) expect(await listsTable(server, 'pooled_notes')).toBe(false);
    await admin.query(`create table public.pooled_notes (id bigint generated always as identity primary key, body text);
      grant select on public.pooled_notes to service_role`);
    const deadline = Date.now() + 5000;
    const seen = new Set<TestServer>();
    while (seen.size < 2 && Date.now() < deadline) {
      for (const server of instances) if (await listsTable(server, 'pooled_notes')) seen.add(server);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(seen.size).toBe(2);
  });

  test('with DATABASE_LISTEN_URL an instance listens past the pooler and reloads on a notice', async () => {
    const [a] = instances;
    const listening = await startTestServer({
      DATABASE_URL: pooledUrl,
      DATABASE_POOLER: 'transaction',
      DATABASE_LISTEN_URL: directUrl,
      JWT_SECRET: a.config.jwtSecret,
      PROJECT_API_KEY: a.config.projectApiKey,
      SERVICE_ROLE_KEY: a.config.serviceRoleKey,
      PAYMENT_WEBHOOK_SECRET: a.config.paymentWebhookSecret,
      CRON_SECRET: a.config.cronSecret,
    });
    try {
      expect(await listsTable(listening, 'announced_notes')).toBe(false); // its cache is loaded
      // Its listener connects once the cache is first used: wait until PostgreSQL has it.
      const listener = `select count(*)::int as n from pg_stat_activity
        where application_name = 'tenantry schema listener' and query ilike 'listen%'`;
      for (const deadline = Date.now() + 5000; Date.now() < deadline;) {
        if ((await admin.query<{ n: number }>(listener)).rows[0]!.n > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await admin.query(`create table public.announced_notes (id integer primary key);
        grant select on public.announced_notes to service_role`);
      // Without a notice it does not poll: the table stays unknown.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await listsTable(listening, 'announced_notes')).toBe(false);
      // The notice, sent through the pooler as a migration would send it.
      const pooled = new pg.Client({ connectionString: pooledUrl });
      await pooled.connect();
      await pooled.query(`select pg_notify('tenantry_schema', 'reload')`);
      await pooled.end();
      let seen = false;
      for (const deadline = Date.now() + 5000; !seen && Date.now() < deadline;) {
        seen = await listsTable(listening, 'announced_notes');
        if (!seen) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(seen).toBe(true);
    } finally {
      await listening.close();
    }
  });

  test('two instances migrating at once through the pooler apply a migration once and leave no lock', async () => {
    // A folder holding only a new migration: the database has applied every other one already.
    // Slow enough that the two runners overlap; applied twice, its create would fail.
    const dir = mkdtempSync(path.join(tmpdir(), 'tenantry-migrations-'));
    writeFileSync(
      path.join(dir, '9999_pooled_probe.sql'),
      `create table internal.pooled_probe (id integer); select pg_sleep(0.3);`,
    );
    const pools = [0, 1].map(() =>
      createPool(pooledUrl, { max: 3, pooler: 'transaction', preparedStatements: false }),
    );
    try {
      const results = await Promise.all(pools.map((pool) => migrate(pool, dir)));
      expect(results.map((r) => r.applied).sort()).toEqual([[], ['9999_pooled_probe.sql']]);
      const locks = await admin.query(`select count(*)::int as n from pg_locks where locktype = 'advisory'`);
      expect(locks.rows).toEqual([{ n: 0 }]);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a transaction left idle through the pooler is ended by its own limit', async () => {
    const pool = createPool(pooledUrl, {
      max: 1,
      pooler: 'transaction',
      preparedStatements: false,
      idleInTransactionTimeoutMs: 300,
    });
    pool.on('error', () => undefined);
    try {
      const idle = withService(pool, async (tx) => {
        await tx.query('select 1');
        await new Promise((resolve) => setTimeout(resolve, 1500));
        return tx.query('select 1');
      });
      await expect(idle).rejects.toThrow();
      // The limit was the transaction's: the server connection PgBouncer hands out next has none.
      const after = await pool.query<{ limit: string }>(
        `select current_setting('idle_in_transaction_session_timeout') as limit`,
      );
      expect(after.rows).toEqual([{ limit: '0' }]);
    } finally {
      await pool.end();
    }
  });
});
