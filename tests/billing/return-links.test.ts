// The links that bring people back from Stripe and from payment e-mails, followed in a real
// browser against the real process: Checkout's success and cancel URLs and the portal's return
// URL (recorded by a local stand-in of the Stripe API) and the payment-failed e-mail's link open
// the workspace's billing page for its members, also after the slug changed; strangers get
// not-found, and signed-out visitors come back to it after signing in.
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { newPage, signUpInBrowser, startBrowserSuite, type BrowserSuite } from '../support/browser-suite.js';
import { startStripeStandIn, type StripeStandIn } from '../support/stripe-api.js';
import { checkoutCompleted, envelope, invoiceObject, sign } from '../support/stripe-events.js';

let stripe: StripeStandIn;
let suite: BrowserSuite;
let db: pg.Client;

beforeAll(async () => {
  stripe = await startStripeStandIn();
  suite = await startBrowserSuite({
    STRIPE_SECRET_KEY: 'sk_test_returnlinks',
    STRIPE_API_BASE: stripe.url,
    BILLING_PLANS: JSON.stringify([{ id: 'pro', name: 'Pro', priceId: 'price_pro_monthly' }]),
  });
  db = suite.db;
}, 300_000);
afterAll(async () => {
  await suite?.stop();
  await stripe?.close();
});

async function deliver(event: ReturnType<typeof envelope>) {
  const body = JSON.stringify(event);
  const res = await fetch(`${suite.app.url}/api/billing/webhook`, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'stripe-signature': sign(body, suite.app.env.PAYMENT_WEBHOOK_SECRET!),
    },
  });
  expect(res.status).toBe(200);
}

/** Follows `url` and expects the billing page of the workspace now called `slug`. */
async function expectBillingPage(page: Page, url: string, slug: string) {
  expect(url.startsWith(`${suite.app.url}/`), url).toBe(true);
  const response = await page.goto(url);
  expect(response?.status(), url).toBe(200);
  expect(new URL(page.url()).pathname).toBe(`/w/${slug}/billing`);
  await expect.poll(() => page.title()).toBe('Billing · Links Co · Tenantry');
}

/** Stripe's hosted pages cannot be reached from here: answer navigations there with a stand-in. */
async function standInForStripePages(page: Page) {
  for (const host of ['https://checkout.stripe.com/**', 'https://billing.stripe.com/**']) {
    await page.route(host, (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<h1>Stripe (stand-in)</h1>' }),
    );
  }
}

test(
  'Checkout, portal and payment-failed links open the billing page, also after a change of slug',
  { timeout: 180_000 },
  async () => {
    const owner = await signUpInBrowser(suite, 'links-owner@example.com');
    await owner.fill('input[name=name]', 'Links Co');
    await owner.click('text=Create workspace');
    await owner.waitForURL('**/w/links-co');
    const ws = (await db.query<{ id: string }>(`select id from public.workspaces where slug = 'links-co'`))
      .rows[0]!.id;
    await standInForStripePages(owner);

    // Checkout: the owner is sent to Stripe, and both ways back lead to the billing page.
    await owner.goto(`${suite.app.url}/w/links-co/billing`);
    await owner.click('text=Upgrade to Pro');
    await owner.waitForURL((url) => url.hostname === 'checkout.stripe.com');
    const checkout = stripe.requests.findLast((r) => r.path === '/v1/checkout/sessions')!;
    await expectBillingPage(owner, checkout.form.success_url!, 'links-co');
    expect(new URL(owner.url()).searchParams.get('checkout')).toBe('success');
    await expectBillingPage(owner, checkout.form.cancel_url!, 'links-co');
    expect(new URL(owner.url()).searchParams.get('checkout')).toBe('cancelled');

    // The customer portal, opened from the billing page, returns there too.
    await owner.click('text=Manage billing');
    await owner.waitForURL((url) => url.hostname === 'billing.stripe.com');
    const portal = stripe.requests.findLast((r) => r.path === '/v1/billing_portal/sessions')!;
    await expectBillingPage(owner, portal.form.return_url!, 'links-co');

    // A failed payment e-mails the owner a link to the billing page.
    const t = Math.floor(Date.now() / 1000);
    const customer = checkout.form.customer!;
    await deliver(
      envelope('checkout.session.completed', checkoutCompleted(ws, customer, 'sub_links'), { created: t }),
    );
    await deliver(
      envelope(
        'invoice.payment_failed',
        invoiceObject({ subscription: 'sub_links', customer, workspaceId: ws, status: 'open' }),
        { created: t + 1 },
      ),
    );
    const mail = await db.query<{ text_body: string }>(
      `select text_body from internal.outbox where kind = 'billing.payment_failed' and to_address = $1`,
      ['links-owner@example.com'],
    );
    const link = /^Billing settings: (\S+)$/m.exec(mail.rows[0]!.text_body)?.[1];
    expect(link).toBeDefined();
    await expectBillingPage(owner, link!, 'links-co');
    await expect(owner.textContent('p.banner[role=alert]')).resolves.toContain('Update the payment method');

    // The slug changes while the links live on (in the inbox, in Stripe's sessions): they follow.
    await db.query(`update public.workspaces set slug = 'links-renamed' where id = $1`, [ws]);
    await expectBillingPage(owner, link!, 'links-renamed');
    await expectBillingPage(owner, checkout.form.success_url!, 'links-renamed');
    await expectBillingPage(owner, portal.form.return_url!, 'links-renamed');

    // Someone else following the link: the workspace does not exist for them, its slug is not told.
    const stranger = await signUpInBrowser(suite, 'links-stranger@example.com');
    const refused = await stranger.goto(link!);
    expect(refused?.status()).toBe(404);
    expect(new URL(stranger.url()).pathname).toBe(`/workspaces/${ws}/billing`);
    expect(await stranger.content()).not.toContain('links-renamed');
    const malformed = await stranger.goto(`${suite.app.url}/workspaces/not-a-uuid/billing`);
    expect(malformed?.status()).toBe(404);

    // Signed out: sign in first, then on to the billing page.
    const visitor = await newPage(suite.browser);
    await visitor.goto(link!);
    expect(new URL(visitor.url()).pathname).toBe('/sign-in');
    await visitor.fill('input[name=email]', 'links-owner@example.com');
    await visitor.fill('input[name=password]', 'correct horse battery');
    await visitor.click('button[type=submit]');
    await visitor.waitForURL('**/w/links-renamed/billing');
  },
);
