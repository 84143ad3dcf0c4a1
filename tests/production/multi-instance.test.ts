// Three instances of the service on one database, as behind a load balancer: a session started on
// one is refreshed on another and used on the third; rate limits count across them; one webhook
// event delivered to two of them at once is applied once; a digest triggered on all three sends
// one e-mail per user.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { checkoutCompleted, envelope, sign, subscriptionObject } from '../support/stripe-events.js';
import { asUser, createUser, rpc } from '../support/tenancy.js';

let instances: TestServer[] = [];

beforeAll(async () => {
  const first = await startTestServer({ RATE_LIMIT_SIGNIN_PER_EMAIL: '4' });
  const shared = {
    DATABASE_URL: first.config.databaseUrl!,
    JWT_SECRET: first.config.jwtSecret,
    PROJECT_API_KEY: first.config.projectApiKey,
    SERVICE_ROLE_KEY: first.config.serviceRoleKey,
    PAYMENT_WEBHOOK_SECRET: first.config.paymentWebhookSecret,
    CRON_SECRET: first.config.cronSecret,
    RATE_LIMIT_SIGNIN_PER_EMAIL: '4',
  };
  instances = [first, await startTestServer(shared), await startTestServer(shared)];
});
afterAll(async () => {
  await Promise.all(instances.map((i) => i.close()));
});

test('sign in on one, refresh on another, read data on the third', async () => {
  const [a, b, c] = instances as [TestServer, TestServer, TestServer];
  const email = `multi-${Date.now()}@example.com`;
  await call(a, 'POST', '/auth/v1/signup', { body: { email, password: 'correct horse battery' } });
  const session = await call(a, 'POST', '/auth/v1/token?grant_type=password', {
    body: { email, password: 'correct horse battery' },
  });
  const refreshed = await call(b, 'POST', '/auth/v1/token?grant_type=refresh_token', {
    body: { refresh_token: session.body.refresh_token },
  });
  expect(refreshed.status).toBe(200);
  const supabase = c.clientWithToken(refreshed.body.access_token as string);
  const created = await supabase.rpc('create_workspace', { name: 'Spread Out' });
  expect(created.error).toBeNull();
  const listed = await supabase.from('workspaces').select('name');
  expect(listed.data).toEqual([{ name: 'Spread Out' }]);
  // the old refresh token is spent everywhere
  const reuse = await call(c, 'POST', '/auth/v1/token?grant_type=refresh_token', {
    body: { refresh_token: 'x'.repeat(43) },
  });
  expect(reuse.status).toBe(400);
});

test('rate limits are counted across instances', async () => {
  const email = `limit-${Date.now()}@example.com`;
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    const res = await call(instances[i % 3]!, 'POST', '/auth/v1/token?grant_type=password', {
      body: { email, password: 'wrong password' },
    });
    statuses.push(res.status);
  }
  expect(statuses).toEqual([400, 400, 400, 400, 429, 429]);
});

test('one webhook event delivered to two instances at once is applied once', async () => {
  const owner = await createUser(instances[0]!.pool, 'multi-owner');
  const ws = await rpc<{ id: string }>(instances[0]!.pool, owner, 'public.create_workspace($1)', [
    'Billing Spread',
  ]);
  const t = Math.floor(Date.now() / 1000);
  const deliver = (server: TestServer, event: ReturnType<typeof envelope>) => {
    const body = JSON.stringify(event);
    return call(server, 'POST', '/api/billing/webhook', {
      rawBody: body,
      apikey: null,
      headers: { 'stripe-signature': sign(body, server.config.paymentWebhookSecret) },
    });
  };
  await deliver(
    instances[0]!,
    envelope('checkout.session.completed', checkoutCompleted(ws.id, 'cus_multi', 'sub_multi'), {
      created: t,
    }),
  );
  const update = envelope(
    'customer.subscription.updated',
    subscriptionObject({ id: 'sub_multi', customer: 'cus_multi', workspaceId: ws.id }),
    {
      created: t + 1,
    },
  );
  const [x, y] = await Promise.all([deliver(instances[1]!, update), deliver(instances[2]!, update)]);
  expect([x.body.outcome, y.body.outcome].sort()).toEqual(['duplicate', 'processed']);
  const logged = await instances[0]!.pool.query(
    'select attempts from internal.billing_events where id = $1',
    [update.id],
  );
  expect(logged.rows).toEqual([{ attempts: 1 }]);
});

test('a digest triggered on all three instances sends one e-mail per user', async () => {
  const pool = instances[0]!.pool;
  const author = await createUser(pool, 'multi-author');
  const ws = await rpc<{ id: string }>(pool, author, 'public.create_workspace($1)', ['Digest Spread']);
  const readers = await Promise.all(Array.from({ length: 15 }, () => createUser(pool, 'multi-reader')));
  for (const reader of readers) {
    await pool.query(`insert into public.workspace_members values ($1, $2, 'member')`, [ws.id, reader.id]);
    await pool.query(
      `update public.notification_preferences set digest_frequency = 'weekly' where user_id = $1`,
      [reader.id],
    );
  }
  // Only the readers take part: everyone else in this database stops getting digests.
  await pool.query(
    `update public.notification_preferences set digest_frequency = 'off' where not (user_id = any($1::uuid[]))`,
    [readers.map((r) => r.id)],
  );
  await asUser(pool, author, (tx) =>
    tx.query(`insert into public.projects (workspace_id, name) values ($1, 'News')`, [ws.id]),
  );
  const results = await Promise.all(
    instances.map((server) =>
      call(server, 'POST', '/api/notifications/digest?frequency=weekly', {
        apikey: null,
        headers: { authorization: `Bearer ${server.config.cronSecret}` },
      }),
    ),
  );
  expect(results.reduce((sum, r) => sum + (r.body.sent as number), 0)).toBe(readers.length);
  const mails = await pool.query(`select to_address from internal.outbox where kind = 'digest'`);
  expect(new Set(mails.rows.map((r) => r.to_address)).size).toBe(mails.rowCount);
  expect(mails.rowCount).toBe(readers.length);
});
