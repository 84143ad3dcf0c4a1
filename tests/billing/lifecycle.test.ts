// Payment events applied to a workspace's billing state, each payload shaped like the current
// Stripe API and signed with the stripe SDK: provisioning, plan changes, failed and recovered
// payments (with owner e-mails), cancellation, and order safety.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import {
  checkoutCompleted,
  deliverEvent,
  envelope,
  invoiceObject,
  subscriptionObject,
} from '../support/stripe-events.js';
import { createUser, rpc } from '../support/tenancy.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    BILLING_PLANS: JSON.stringify([{ id: 'pro', name: 'Pro', priceId: 'price_pro_monthly' }]),
  });
});
afterAll(async () => server?.close());

const deliver = (event: ReturnType<typeof envelope>) => deliverEvent(server, event);

async function newWorkspace() {
  const owner = await createUser(server.pool, 'billing-owner');
  const ws = await rpc<{ id: string }>(server.pool, owner, 'public.create_workspace($1)', [
    'Paying Customer',
  ]);
  const tag = Math.random().toString(36).slice(2, 10);
  return { owner, ws: ws.id, customer: `cus_${tag}`, subscription: `sub_${tag}` };
}

const state = async (ws: string) =>
  (
    await server.pool.query(
      `select plan, status, stripe_customer_id, stripe_subscription_id, cancel_at_period_end,
              past_due_since is not null as past_due, extract(epoch from current_period_end)::bigint as period_end
       from public.subscriptions where workspace_id = $1`,
      [ws],
    )
  ).rows[0];

test('checkout, payment failure and recovery, plan change, cancellation', async () => {
  const { owner, ws, customer, subscription } = await newWorkspace();
  const t = Math.floor(Date.now() / 1000);

  const checkout = await deliver(
    envelope('checkout.session.completed', checkoutCompleted(ws, customer, subscription), { created: t }),
  );
  expect(checkout.body.outcome).toBe('processed');
  expect(await state(ws)).toMatchObject({
    plan: 'free',
    stripe_customer_id: customer,
    stripe_subscription_id: subscription,
  });

  const periodEnd = t + 30 * 86400;
  const active = await deliver(
    envelope(
      'customer.subscription.updated',
      subscriptionObject({ id: subscription, customer, workspaceId: ws, periodEnd }),
      {
        created: t + 1,
      },
    ),
  );
  expect(active.body.outcome).toBe('processed');
  expect(await state(ws)).toMatchObject({
    plan: 'pro',
    status: 'active',
    past_due: false,
    period_end: String(periodEnd),
  });

  const failed = await deliver(
    envelope(
      'invoice.payment_failed',
      invoiceObject({ subscription, customer, workspaceId: ws, status: 'open' }),
      { created: t + 2 },
    ),
  );
  expect(failed.body.outcome).toBe('processed');
  expect(await state(ws)).toMatchObject({ status: 'past_due', past_due: true, plan: 'pro' });
  const notices = await server.pool.query<{ to_address: string; subject: string; text_body: string }>(
    `select to_address, subject, text_body from internal.outbox where kind = 'billing.payment_failed'`,
  );
  expect(notices.rows).toEqual([
    {
      to_address: owner.email,
      subject: 'Payment failed for Paying Customer',
      text_body: expect.stringContaining('29.00 USD'),
    },
  ]);

  const recovered = await deliver(
    envelope(
      'invoice.payment_succeeded',
      invoiceObject({
        subscription,
        customer,
        workspaceId: ws,
        status: 'paid',
        periodEnd: periodEnd + 86400,
      }),
      {
        created: t + 3,
      },
    ),
  );
  expect(recovered.body.outcome).toBe('processed');
  expect(await state(ws)).toMatchObject({
    status: 'active',
    past_due: false,
    period_end: String(periodEnd + 86400),
  });

  const cancelling = await deliver(
    envelope(
      'customer.subscription.updated',
      subscriptionObject({
        id: subscription,
        customer,
        workspaceId: ws,
        cancelAtPeriodEnd: true,
        periodEnd: periodEnd + 86400,
      }),
      { created: t + 4, previous: { cancel_at_period_end: false } },
    ),
  );
  expect(cancelling.body.outcome).toBe('processed');
  expect(await state(ws)).toMatchObject({ cancel_at_period_end: true, plan: 'pro' });

  const deleted = await deliver(
    envelope(
      'customer.subscription.deleted',
      subscriptionObject({ id: subscription, customer, workspaceId: ws, status: 'canceled' }),
      {
        created: t + 5,
      },
    ),
  );
  expect(deleted.body.outcome).toBe('processed');
  expect(await state(ws)).toMatchObject({ plan: 'free', status: 'canceled', cancel_at_period_end: false });
});

test('order safety: an update before the checkout applies; an older update after a newer one is ignored', async () => {
  const { ws, customer, subscription } = await newWorkspace();
  const t = Math.floor(Date.now() / 1000);
  // The subscription event overtakes the checkout that links it: our metadata finds the workspace.
  const early = await deliver(
    envelope(
      'customer.subscription.updated',
      subscriptionObject({ id: subscription, customer, workspaceId: ws, status: 'past_due' }),
      {
        created: t + 10,
      },
    ),
  );
  expect(early.body.outcome).toBe('processed');
  await deliver(
    envelope('checkout.session.completed', checkoutCompleted(ws, customer, subscription), { created: t }),
  );
  expect(await state(ws)).toMatchObject({ status: 'past_due', stripe_customer_id: customer });

  const stale = await deliver(
    envelope(
      'customer.subscription.updated',
      subscriptionObject({ id: subscription, customer, workspaceId: ws, status: 'active' }),
      {
        created: t + 5,
      },
    ),
  );
  expect(stale.status).toBe(200);
  expect(stale.body.outcome).toBe('ignored');
  expect(await state(ws)).toMatchObject({ status: 'past_due' });
});

test('an event no workspace can be found for fails (5xx, retried), and applies once linked', async () => {
  const { ws, customer, subscription } = await newWorkspace();
  const t = Math.floor(Date.now() / 1000);
  const orphan = envelope(
    'invoice.payment_succeeded',
    invoiceObject({ subscription, customer, status: 'paid' }),
    { created: t + 1 },
  );
  const first = await deliver(orphan);
  expect(first.status).toBe(500);
  expect(first.body.error).toBe('handler_failed');
  const logged = await server.pool.query('select status from internal.billing_events where id = $1', [
    orphan.id,
  ]);
  expect(logged.rows[0].status).toBe('failed');

  await deliver(
    envelope('checkout.session.completed', checkoutCompleted(ws, customer, subscription), { created: t }),
  );
  const retried = await deliver(orphan); // the provider's retry
  expect(retried.status).toBe(200);
  expect(retried.body.outcome).toBe('processed');
});

test('members read the billing state through the data API; nobody else does, and nobody writes it', async () => {
  const { owner, ws } = await newWorkspace();
  const outsider = await createUser(server.pool, 'outsider');
  const read = await rpc<{ plan: string }[]>(
    server.pool,
    owner,
    `(select json_agg(s) from public.subscriptions s where workspace_id = $1)`,
    [ws],
  );
  expect(read).toEqual([expect.objectContaining({ plan: 'free' })]);
  const hidden = await rpc<unknown>(
    server.pool,
    outsider,
    `(select json_agg(s) from public.subscriptions s where workspace_id = $1)`,
    [ws],
  );
  expect(hidden).toBeNull();
});

test('the same payment_failed event delivered 50 times at once: one state change, one e-mail per owner', async () => {
  const { owner, ws, customer, subscription } = await newWorkspace();
  const t = Math.floor(Date.now() / 1000);
  await deliver(
    envelope('checkout.session.completed', checkoutCompleted(ws, customer, subscription), { created: t }),
  );
  const event = envelope(
    'invoice.payment_failed',
    invoiceObject({ subscription, customer, workspaceId: ws, status: 'open' }),
    { created: t + 1 },
  );
  const responses = await Promise.all(Array.from({ length: 50 }, () => deliver(event)));
  expect(responses.every((r) => r.status === 200)).toBe(true);
  expect(responses.filter((r) => r.body.outcome === 'processed')).toHaveLength(1);
  expect(responses.filter((r) => r.body.outcome === 'duplicate')).toHaveLength(49);
  const mails = await server.pool.query(
    `select 1 from internal.outbox where kind = 'billing.payment_failed' and to_address = $1`,
    [owner.email],
  );
  expect(mails.rowCount).toBe(1);
  expect(await state(ws)).toMatchObject({ status: 'past_due' });
});
