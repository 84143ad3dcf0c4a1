// Payment events touch only the workspace linked to their Stripe customer, with payloads signed by
// the real stripe SDK: metadata naming another workspace neither changes it nor diverts the event;
// metadata links only a workspace without a customer; an event that would cross workspaces is
// refused (200, nothing applied, recorded as failed with the reason).
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

const now = () => Math.floor(Date.now() / 1000);
const tag = () => Math.random().toString(36).slice(2, 10);

async function newWorkspace(name: string) {
  const owner = await createUser(server.pool, 'owner');
  const ws = await rpc<{ id: string }>(server.pool, owner, 'public.create_workspace($1)', [name]);
  return { owner, ws: ws.id };
}

/** A workspace whose checkout completed: linked to its own customer and subscription. */
async function linkedWorkspace(name: string) {
  const { owner, ws } = await newWorkspace(name);
  const customer = `cus_${tag()}`;
  const subscription = `sub_${tag()}`;
  const res = await deliver(
    envelope('checkout.session.completed', checkoutCompleted(ws, customer, subscription), {
      created: now() - 60,
    }),
  );
  expect(res.body.outcome).toBe('processed');
  return { owner, ws, customer, subscription };
}

const state = async (ws: string) =>
  (
    await server.pool.query(
      `select plan, status, stripe_customer_id, stripe_subscription_id, past_due_since is not null as past_due
       from public.subscriptions where workspace_id = $1`,
      [ws],
    )
  ).rows[0];

const logged = async (id: string) =>
  (
    await server.pool.query<{ status: string; last_error: string | null }>(
      'select status, last_error from internal.billing_events where id = $1',
      [id],
    )
  ).rows[0];

const mailsTo = async (email: string) =>
  (
    await server.pool.query(
      `select 1 from internal.outbox where kind = 'billing.payment_failed' and to_address = $1`,
      [email],
    )
  ).rowCount;

test("an event for A's customer with metadata naming B applies to A and leaves B alone", async () => {
  const a = await linkedWorkspace('Alpha');
  const b = await newWorkspace('Bravo');
  const before = await state(b.ws);

  const update = envelope(
    'customer.subscription.updated',
    subscriptionObject({ id: a.subscription, customer: a.customer, workspaceId: b.ws }),
    { created: now() },
  );
  const res = await deliver(update);
  expect(res.status).toBe(200);
  expect(res.body.outcome).toBe('processed');
  expect(await state(a.ws)).toMatchObject({ plan: 'pro', status: 'active' });
  expect(await state(b.ws)).toEqual(before);

  const failed = envelope(
    'invoice.payment_failed',
    invoiceObject({ subscription: a.subscription, customer: a.customer, workspaceId: b.ws, status: 'open' }),
    { created: now() + 1 },
  );
  expect((await deliver(failed)).body.outcome).toBe('processed');
  expect(await state(a.ws)).toMatchObject({ status: 'past_due', past_due: true });
  expect(await state(b.ws)).toEqual(before);
  expect(await mailsTo(a.owner.email)).toBe(1);
  expect(await mailsTo(b.owner.email)).toBe(0);
});

test("a checkout naming B for A's customer does not link B", async () => {
  const a = await linkedWorkspace('Charlie');
  const b = await newWorkspace('Delta');
  const res = await deliver(
    envelope('checkout.session.completed', checkoutCompleted(b.ws, a.customer, a.subscription), {
      created: now(),
    }),
  );
  expect(res.status).toBe(200);
  expect(await state(b.ws)).toMatchObject({ stripe_customer_id: null, stripe_subscription_id: null });
  expect(await state(a.ws)).toMatchObject({ stripe_customer_id: a.customer });
});

test('metadata cannot relink a workspace that has a customer: refused, recorded as failed, acknowledged', async () => {
  const b = await linkedWorkspace('Echo');
  const before = await state(b.ws);
  const stranger = `cus_${tag()}`;
  const events = [
    envelope(
      'customer.subscription.updated',
      subscriptionObject({ id: `sub_${tag()}`, customer: stranger, workspaceId: b.ws, status: 'canceled' }),
      { created: now() },
    ),
    envelope('checkout.session.completed', checkoutCompleted(b.ws, stranger, `sub_${tag()}`), {
      created: now(),
    }),
    envelope(
      'invoice.payment_failed',
      invoiceObject({ subscription: `sub_${tag()}`, customer: stranger, workspaceId: b.ws, status: 'open' }),
      { created: now() },
    ),
  ];
  for (const event of events) {
    const res = await deliver(event);
    expect(res.status, event.type).toBe(200);
    expect(res.body.outcome, event.type).toBe('refused');
    expect(await logged(event.id), event.type).toMatchObject({
      status: 'failed',
      last_error: expect.stringMatching(/^Refused: .*linked to another customer/),
    });
  }
  expect(await state(b.ws)).toEqual(before);
  expect(await mailsTo(b.owner.email)).toBe(0);
  // A redelivery is refused the same way and still changes nothing.
  expect((await deliver(events[0]!)).body.outcome).toBe('refused');
  expect(await state(b.ws)).toEqual(before);
});

test("an event for another customer naming A's subscription is refused", async () => {
  const a = await linkedWorkspace('Foxtrot');
  const before = await state(a.ws);
  const event = envelope(
    'customer.subscription.deleted',
    subscriptionObject({ id: a.subscription, customer: `cus_${tag()}`, status: 'canceled' }),
    { created: now() },
  );
  const res = await deliver(event);
  expect(res.status).toBe(200);
  expect(res.body.outcome).toBe('refused');
  expect((await logged(event.id))?.status).toBe('failed');
  expect(await state(a.ws)).toEqual(before);
});

test('metadata links a workspace without a customer; that customer then decides', async () => {
  const c = await newWorkspace('Golf');
  const customer = `cus_${tag()}`;
  const subscription = `sub_${tag()}`;
  // The subscription event overtakes its checkout: the metadata finds the workspace and links it.
  const early = await deliver(
    envelope(
      'customer.subscription.created',
      subscriptionObject({ id: subscription, customer, workspaceId: c.ws }),
      { created: now() },
    ),
  );
  expect(early.body.outcome).toBe('processed');
  expect(await state(c.ws)).toMatchObject({
    plan: 'pro',
    stripe_customer_id: customer,
    stripe_subscription_id: subscription,
  });
  // Another customer can no longer claim it through metadata.
  const other = await deliver(
    envelope(
      'customer.subscription.updated',
      subscriptionObject({
        id: `sub_${tag()}`,
        customer: `cus_${tag()}`,
        workspaceId: c.ws,
        status: 'canceled',
      }),
      { created: now() + 1 },
    ),
  );
  expect(other.body.outcome).toBe('refused');
  expect(await state(c.ws)).toMatchObject({ plan: 'pro', stripe_customer_id: customer });
});

test("an event naming A's customer and B's subscription is refused, for subscriptions and invoices alike", async () => {
  const a = await linkedWorkspace('Golf');
  const b = await linkedWorkspace('Hotel');
  const before = [await state(a.ws), await state(b.ws)];
  const events = [
    envelope(
      'customer.subscription.updated',
      subscriptionObject({ id: b.subscription, customer: a.customer, status: 'past_due' }),
      { created: now() },
    ),
    envelope(
      'invoice.payment_succeeded',
      invoiceObject({ subscription: b.subscription, customer: a.customer, status: 'paid' }),
      { created: now() },
    ),
  ];
  for (const event of events) {
    const res = await deliver(event);
    expect(res.status, event.type).toBe(200);
    expect(res.body.outcome, event.type).toBe('refused');
    expect(await logged(event.id), event.type).toEqual({
      status: 'failed',
      last_error: `Refused: subscription ${b.subscription} belongs to another workspace than customer ${a.customer}`,
    });
  }
  expect([await state(a.ws), await state(b.ws)]).toEqual(before);
});
