// Billing in the browser: plan limits refused through server actions with a clear message, the
// owner sent to Stripe Checkout (a local stand-in of the Stripe API records it), webhook events
// changing the plan and status shown on the billing page, and the past-due banner for members.
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { AppProcess } from '../support/app-process.js';
import {
  formError,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';
import { flashAfter } from '../support/flash.js';
import { startStripeStandIn, type StripeStandIn } from '../support/stripe-api.js';
import {
  checkoutCompleted,
  envelope,
  invoiceObject,
  sign,
  subscriptionObject,
} from '../support/stripe-events.js';

let stripe: StripeStandIn;
let suite: BrowserSuite;
let app: AppProcess;
let db: pg.Client;

beforeAll(async () => {
  stripe = await startStripeStandIn();
  suite = await startBrowserSuite({
    STRIPE_SECRET_KEY: 'sk_test_e2estandin',
    STRIPE_API_BASE: stripe.url,
    BILLING_PLANS: JSON.stringify([
      {
        id: 'pro',
        name: 'Pro',
        priceId: 'price_pro_monthly',
        price: '$29 a month',
        seats: 20,
        projects: 10,
        features: ['Priority support'],
      },
    ]),
    FREE_PLAN_PROJECTS: '1',
  });
  ({ app, db } = suite);
}, 300_000);
afterAll(async () => {
  await suite?.stop();
  await stripe?.close();
});

const signUp = (email: string): Promise<Page> => signUpInBrowser(suite, email);

async function deliver(event: ReturnType<typeof envelope>) {
  const body = JSON.stringify(event);
  const res = await fetch(`${app.url}/api/billing/webhook`, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'stripe-signature': sign(body, app.env.PAYMENT_WEBHOOK_SECRET!),
    },
  });
  expect(res.status).toBe(200);
}

const notice = async (page: Page, click: () => Promise<unknown>, text: string) =>
  expect(await flashAfter(page, click)).toEqual({ kind: 'notice', text });

test(
  'limits, checkout, plan changes from webhooks, and the past-due banner',
  { timeout: 150_000 },
  async () => {
    const owner = await signUp('billing-owner@example.com');
    await owner.fill('input[name=name]', 'Paying Co');
    await notice(owner, () => owner.click('text=Create workspace'), 'Workspace Paying Co created');
    const slug = 'paying-co';
    const ws = (await db.query<{ id: string }>('select id from public.workspaces where slug = $1', [slug]))
      .rows[0]!.id;

    // The free plan here allows one project: the second is refused, saying why.
    await owner.goto(`${app.url}/w/${slug}`);
    const newProject = 'form:has(button:text("Add project")) input[name=name]';
    await owner.fill(newProject, 'First');
    await notice(owner, () => owner.click('text=Add project'), 'Project created');
    await owner.fill(newProject, 'Second');
    await owner.click('text=Add project');
    await expect(formError(owner)).resolves.toContain("free plan's limit of 1 projects");
    // What was typed is still there, to send again after upgrading.
    expect(await owner.inputValue(newProject)).toBe('Second');

    // The owner upgrades: the browser is sent to Stripe Checkout for this workspace.
    await owner.goto(`${app.url}/w/${slug}/billing`);
    await expect(owner.getAttribute('[data-plan]', 'data-plan')).resolves.toBe('free');
    await expect(owner.textContent('[data-usage=projects]')).resolves.toBe('1 of 1');
    // Every plan with its price and what it includes, the current one marked; nothing of the
    // operator's set-up is shown to customers.
    const free = owner.locator('[data-plan-card=free]');
    const pro = owner.locator('[data-plan-card=pro]');
    await expect(free.getAttribute('aria-current')).resolves.toBe('true');
    await expect(free.textContent()).resolves.toContain('1 project');
    await expect(pro.textContent()).resolves.toContain('$29 a month');
    await expect(pro.textContent()).resolves.toContain('20 seats');
    await expect(pro.textContent()).resolves.toContain('10 projects');
    await expect(pro.textContent()).resolves.toContain('Priority support');
    await expect(owner.textContent('main')).resolves.not.toMatch(/STRIPE|BILLING_PLANS|webhook/i);
    // Stripe's hosted pages cannot be reached from here: answer the navigation with a stand-in page.
    await owner.route('https://checkout.stripe.com/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<h1>Stripe Checkout (stand-in)</h1>' }),
    );
    await owner.click('text=Upgrade to Pro');
    await owner.waitForURL((url) => url.hostname === 'checkout.stripe.com');
    const session = stripe.requests.find((r) => r.path === '/v1/checkout/sessions')!;
    expect(session.form).toMatchObject({
      client_reference_id: ws,
      'line_items[0][price]': 'price_pro_monthly',
    });

    // Stripe reports the completed checkout and the active subscription.
    const t = Math.floor(Date.now() / 1000);
    await deliver(
      envelope('checkout.session.completed', checkoutCompleted(ws, session.form.customer!, 'sub_e2e'), {
        created: t,
      }),
    );
    await deliver(
      envelope(
        'customer.subscription.updated',
        subscriptionObject({ id: 'sub_e2e', customer: session.form.customer!, workspaceId: ws }),
        {
          created: t + 1,
        },
      ),
    );
    await owner.goto(`${app.url}/w/${slug}/billing`);
    await expect(owner.getAttribute('[data-plan]', 'data-plan')).resolves.toBe('pro');
    await expect(owner.getAttribute('[data-status]', 'data-status')).resolves.toBe('active');
    await expect(owner.textContent('[data-usage=projects]')).resolves.toBe('1 of 10');
    await expect(owner.textContent('[data-usage=seats]')).resolves.toBe('1 of 20');
    await owner.goto(`${app.url}/w/${slug}`);
    await owner.fill(newProject, 'Second');
    await notice(owner, () => owner.click('text=Add project'), 'Project created');

    // A failed payment: every member sees the banner; the owner gets a link to fix it.
    await deliver(
      envelope(
        'invoice.payment_failed',
        invoiceObject({
          subscription: 'sub_e2e',
          customer: session.form.customer!,
          workspaceId: ws,
          status: 'open',
        }),
        {
          created: t + 2,
        },
      ),
    );
    const member = await signUp('billing-member@example.com');
    await db.query(
      `insert into public.workspace_members (workspace_id, user_id, role)
     select $1, id, 'member' from public.profiles where email = 'billing-member@example.com'`,
      [ws],
    );
    await member.goto(`${app.url}/w/${slug}`);
    await expect(member.textContent('p.banner[role=alert]')).resolves.toContain('Payment overdue');
    await owner.goto(`${app.url}/w/${slug}/billing`);
    await expect(owner.textContent('p.banner[role=alert]')).resolves.toContain('Update the payment method');
    await expect(owner.getAttribute('[data-status]', 'data-status')).resolves.toBe('past_due');
    await owner.screenshot({ path: 'test-results/screenshots/billing-past-due.png' });
  },
);
