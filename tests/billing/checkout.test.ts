// Checkout and customer portal through the real stripe SDK, pointed at a local stand-in of the
// Stripe API: owner only, one customer per workspace reused, the workspace id in both places the
// webhook reads it, and a clear refusal when billing is not configured.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { Billing } from '../../src/server/billing/checkout.js';
import { withService } from '../../src/server/db/transactions.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startStripeStandIn, type StripeStandIn } from '../support/stripe-api.js';
import { claimsFor, createUser, rpc } from '../support/tenancy.js';

let server: TestServer;
let stripe: StripeStandIn;
let billing: Billing;
const plans = [{ id: 'pro', name: 'Pro', priceId: 'price_pro_monthly', seats: 25, projects: null }];

beforeAll(async () => {
  server = await startTestServer();
  stripe = await startStripeStandIn();
  billing = new Billing({
    pool: server.pool,
    plans,
    appUrl: 'https://app.example.com',
    stripeSecretKey: 'sk_test_standin123',
    stripeApiBase: stripe.url,
  });
});
afterAll(async () => {
  await server?.close();
  await stripe?.close();
});

async function ownedWorkspace() {
  const owner = await createUser(server.pool, 'payer');
  const admin = await createUser(server.pool, 'admin');
  const ws = await rpc<{ id: string }>(server.pool, owner, 'public.create_workspace($1)', ['Checkout Co']);
  await withService(server.pool, (tx) =>
    tx.query(`insert into public.workspace_members values ($1, $2, 'admin')`, [ws.id, admin.id]),
  );
  return { owner, admin, ws: ws.id };
}

describe('checkout', () => {
  test('an owner gets a Checkout URL; the customer is created once and reused', async () => {
    const { owner, ws } = await ownedWorkspace();
    stripe.requests.length = 0;
    const url = await billing.startCheckout(claimsFor(owner), ws, 'pro');
    expect(url).toMatch(/^https:\/\/checkout\.stripe\.com\/c\/pay\/cs_test_/);
    const [customer, session] = stripe.requests;
    expect(customer).toMatchObject({
      method: 'POST',
      path: '/v1/customers',
      authorization: 'Bearer sk_test_standin123',
    });
    expect(customer!.form).toMatchObject({
      name: 'Checkout Co',
      email: owner.email,
      'metadata[workspace_id]': ws,
    });
    expect(session!.path).toBe('/v1/checkout/sessions');
    expect(session!.form).toMatchObject({
      mode: 'subscription',
      client_reference_id: ws,
      'line_items[0][price]': 'price_pro_monthly',
      'line_items[0][quantity]': '1',
      'subscription_data[metadata][workspace_id]': ws,
      // By id, through the stable link that sends members on to /w/<current slug>/billing
      // (tests/billing/return-links.test.ts follows them in a browser).
      success_url: `https://app.example.com/workspaces/${ws}/billing?checkout=success`,
      cancel_url: `https://app.example.com/workspaces/${ws}/billing?checkout=cancelled`,
    });
    const stored = await server.pool.query(
      'select stripe_customer_id from public.subscriptions where workspace_id = $1',
      [ws],
    );
    expect(stored.rows[0].stripe_customer_id).toBe(session!.form.customer);

    stripe.requests.length = 0;
    await billing.startCheckout(claimsFor(owner), ws, 'pro');
    expect(stripe.requests.map((r) => r.path)).toEqual(['/v1/checkout/sessions']);
    expect(stripe.requests[0]!.form.customer).toBe(stored.rows[0].stripe_customer_id);
  });

  test('admins, strangers and unknown plans are refused before Stripe is called', async () => {
    const { admin, ws } = await ownedWorkspace();
    const stranger = await createUser(server.pool, 'stranger');
    stripe.requests.length = 0;
    await expect(billing.startCheckout(claimsFor(admin), ws, 'pro')).rejects.toMatchObject({ status: 403 });
    await expect(billing.startCheckout(claimsFor(stranger), ws, 'pro')).rejects.toMatchObject({
      status: 404,
    });
    await expect(billing.startCheckout(claimsFor(admin), ws, 'platinum')).rejects.toMatchObject({
      status: 400,
    });
    expect(stripe.requests).toEqual([]);
  });
});

describe('customer portal', () => {
  test('needs a customer first, then returns a portal URL for the owner', async () => {
    const { owner, ws } = await ownedWorkspace();
    await expect(billing.openPortal(claimsFor(owner), ws)).rejects.toMatchObject({ status: 409 });
    await billing.startCheckout(claimsFor(owner), ws, 'pro');
    const url = await billing.openPortal(claimsFor(owner), ws);
    expect(url).toMatch(/^https:\/\/billing\.stripe\.com\/p\/session\/bps_/);
    const portal = stripe.requests.at(-1)!;
    expect(portal.form).toMatchObject({ return_url: `https://app.example.com/workspaces/${ws}/billing` });
  });
});

test('without a Stripe key, billing says it is not configured', async () => {
  const { owner, ws } = await ownedWorkspace();
  const unconfigured = new Billing({
    pool: server.pool,
    plans,
    appUrl: 'https://app.example.com',
    stripeSecretKey: undefined,
    stripeApiBase: undefined,
  });
  expect(unconfigured.configured).toBe(false);
  await expect(unconfigured.startCheckout(claimsFor(owner), ws, 'pro')).rejects.toMatchObject({
    status: 503,
    code: 'billing_not_configured',
  });
});
