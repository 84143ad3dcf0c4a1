// An event is applied in one transaction whose claim rides with the begin and whose status rides
// with the commit: an event a handler does not know is two messages, one a handler applies is
// three (the workspace lookup and the order-guarded change are one prepared statement), and what
// is stored is exactly what was sent, however hostile its strings (they travel as parameters of
// prepared statements).
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { statementsDuring as sentDuring } from '../support/statements.js';
import { envelope, sign } from '../support/stripe-events.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

/** Every statement the server's connections run while fn runs, as text. */
const statementsDuring = async (fn: () => Promise<void>): Promise<string[]> =>
  (await sentDuring(server.pool, fn))
    .map((s) => s.text)
    // Realtime's presence signal between instances (a NOTIFY every few seconds) shares the pool.
    .filter((text) => !text.startsWith('select pg_notify($1, c) from unnest'));

test('an event no handler knows is recorded in two messages: begin with the claim, the status with the commit', async () => {
  const hostile = `it's a "quote", a back\\slash, E'\\x00', $1 $$ dollar $$, ✓ 😀`;
  const event = envelope('customer.created', { id: 'cus_round_trips', object: 'customer', name: hostile });
  const body = JSON.stringify(event);
  let status = 0;
  const statements = await statementsDuring(async () => {
    const res = await call(server, 'POST', '/api/billing/webhook', {
      rawBody: body,
      apikey: null,
      headers: { 'stripe-signature': sign(body, server.config.paymentWebhookSecret) },
    });
    status = res.status;
  });
  expect(status).toBe(200);
  expect(statements).toHaveLength(2);
  expect(statements[0]).toMatch(/^begin; insert into internal\.billing_events/);
  expect(statements[1]).toMatch(/^update internal\.billing_events set status = \$2.*; commit$/s);

  const stored = await server.pool.query<{ payload: { data: { object: { name: string } } }; status: string }>(
    'select payload, status from internal.billing_events where id = $1',
    [event.id],
  );
  expect(stored.rows[0]?.status).toBe('ignored');
  expect(stored.rows[0]?.payload.data.object.name).toBe(hostile);
});

test('a subscription change is two messages: the claim with the begin, then the workspace lookup and the guarded update with the commit', async () => {
  const workspace = await server.pool.query<{ id: string }>(
    `insert into public.workspaces (name, slug) values ('Round trips', $1) returning id`,
    [`round-trips-${Date.now()}`],
  );
  const workspaceId = workspace.rows[0]!.id;
  await server.pool.query(
    'insert into public.subscriptions (workspace_id) values ($1) on conflict do nothing',
    [workspaceId],
  );
  const subscription = (status: string, created: number) =>
    envelope(
      'customer.subscription.updated',
      {
        id: 'sub_round_trips',
        object: 'subscription',
        customer: 'cus_round_trips_sub',
        status,
        cancel_at_period_end: false,
        metadata: { workspace_id: workspaceId },
        items: { object: 'list', data: [{ current_period_end: created + 86400, price: { id: 'price_x' } }] },
      },
      { created },
    );
  const deliver = async (event: ReturnType<typeof subscription>) => {
    const body = JSON.stringify(event);
    let outcome: unknown;
    const statements = await statementsDuring(async () => {
      const res = await call(server, 'POST', '/api/billing/webhook', {
        rawBody: body,
        apikey: null,
        headers: { 'stripe-signature': sign(body, server.config.paymentWebhookSecret) },
      });
      expect(res.status).toBe(200);
      outcome = res.body.outcome;
    });
    return { statements, outcome, id: event.id };
  };
  const now = Math.floor(Date.now() / 1000);

  const first = await deliver(subscription('past_due', now));
  expect(first.outcome).toBe('processed');
  expect(first.statements).toHaveLength(2);
  expect(first.statements[0]).toMatch(/^begin; insert into internal\.billing_events/);
  // A refusal raises inside the statement, so the commit can follow it in the same message.
  expect(first.statements[1]).toMatch(
    /internal\.billing_workspace_for\(.*update public\.subscriptions.*internal\.billing_require_target\(.*; commit$/s,
  );
  // An older event, found through the customer the first one linked, changes nothing.
  const older = await deliver(subscription('active', now - 60));
  expect(older.outcome).toBe('ignored');
  // the same statement marks it 'ignored' (the claim wrote 'processed'), still with the commit
  expect(older.statements).toHaveLength(2);
  expect(older.statements[1]).toMatch(/update internal\.billing_events set status = 'ignored'.*; commit$/s);
  const row = await server.pool.query(
    'select status, stripe_customer_id, last_event_created from public.subscriptions where workspace_id = $1',
    [workspaceId],
  );
  expect(row.rows[0]).toEqual({
    status: 'past_due',
    stripe_customer_id: 'cus_round_trips_sub',
    last_event_created: String(now),
  });
  const logged = await server.pool.query(
    `select id, status, attempts, last_error, processed_at is not null as stamped
     from internal.billing_events where id = any($1) order by created`,
    [[first.id, older.id]],
  );
  expect(logged.rows).toEqual([
    { id: older.id, status: 'ignored', attempts: 1, last_error: null, stamped: true },
    { id: first.id, status: 'processed', attempts: 1, last_error: null, stamped: true },
  ]);
});

test('with the commit in the same message, a refusal or an unlinked workspace still rolls everything back', async () => {
  const now = Math.floor(Date.now() / 1000);
  const post = async (event: ReturnType<typeof envelope>) => {
    const body = JSON.stringify(event);
    return call(server, 'POST', '/api/billing/webhook', {
      rawBody: body,
      apikey: null,
      headers: { 'stripe-signature': sign(body, server.config.paymentWebhookSecret) },
    });
  };
  const logged = async (id: string) =>
    (await server.pool.query('select status, last_error from internal.billing_events where id = $1', [id]))
      .rows[0];
  // No workspace has this customer or subscription, and the metadata names none that exists.
  const unlinked = envelope(
    'customer.subscription.updated',
    {
      id: 'sub_not_linked_yet',
      object: 'subscription',
      customer: 'cus_not_linked_yet',
      status: 'active',
      metadata: { workspace_id: '7d4c7a36-1d7b-4a52-9a3e-3c0f7c1e2b11' },
      items: { object: 'list', data: [{ current_period_end: now + 86400, price: { id: 'price_x' } }] },
    },
    { created: now },
  );
  const answer = await post(unlinked);
  expect(answer.status).toBe(500);
  expect(await logged(unlinked.id)).toEqual({
    status: 'failed',
    last_error: 'No workspace is linked to this payment event yet',
  });
  const touched = await server.pool.query(
    `select 1 from public.subscriptions where stripe_subscription_id = 'sub_not_linked_yet'`,
  );
  expect(touched.rowCount).toBe(0);
});
