// The web app's sign-up and sign-in know the client by the same rule as the APIs: with
// TRUST_PROXY off (the default) X-Forwarded-For is ignored, so varying it does not get around the
// per-address sign-up limit, the session records the real address, and a header that is not an
// address at all changes nothing. Nor can a client pose as the server's own stamp of who it is.
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { formError, startBrowserSuite, type BrowserSuite } from '../support/browser-suite.js';

let suite: BrowserSuite;
const screenshots = 'test-results/screenshots';
const SIGNUPS_PER_ADDRESS = 3;

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  suite = await startBrowserSuite({ RATE_LIMIT_SIGNUP_PER_ADDRESS: String(SIGNUPS_PER_ADDRESS) });
}, 300_000);
afterAll(async () => suite?.stop());

/** A fresh browser profile whose every request carries `headers`. */
async function pageWithHeaders(headers: Record<string, string>): Promise<Page> {
  const context = await suite.browser.newContext({ extraHTTPHeaders: headers });
  context.setDefaultTimeout(15_000);
  return context.newPage();
}

/** A confirmed user made with the service-role key (not counted against sign-up limits). */
async function createUser(email: string): Promise<void> {
  const res = await fetch(`${suite.app.url}/auth/v1/admin/users`, {
    method: 'POST',
    headers: {
      apikey: suite.app.env.SERVICE_ROLE_KEY!,
      authorization: `Bearer ${suite.app.env.SERVICE_ROLE_KEY!}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ email, password: 'correct horse battery', email_confirm: true }),
  });
  expect(res.status).toBe(200);
}

async function signIn(page: Page, email: string): Promise<void> {
  await page.goto(`${suite.app.url}/sign-in`);
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', 'correct horse battery');
  await page.click('button[type=submit]');
}

async function sessionAddresses(email: string): Promise<string[]> {
  const r = await suite.db.query<{ ip: string }>(
    `select host(s.ip) as ip from auth.sessions s join auth.users u on u.id = s.user_id where u.email = $1`,
    [email],
  );
  return r.rows.map((row) => row.ip);
}

test('the session records the real address, not a forged X-Forwarded-For or stamp', async () => {
  await createUser('forged-xff@example.com');
  const page = await pageWithHeaders({
    'x-forwarded-for': '203.0.113.7',
    'x-tenantry-client-address': 'AAAA 203.0.113.8 203.0.113.8',
  });
  await signIn(page, 'forged-xff@example.com');
  await page.waitForURL('**/workspaces');
  expect(await sessionAddresses('forged-xff@example.com')).toEqual(['127.0.0.1']);
});

test('an X-Forwarded-For that is not an address does not break a correct sign-in', async () => {
  await createUser('garbage-xff@example.com');
  for (const garbage of ['not-an-ip', "1.2.3.4'; drop table auth.sessions; --", 'fe80::1%eth0', '::1, x']) {
    const page = await pageWithHeaders({ 'x-forwarded-for': garbage });
    await signIn(page, 'garbage-xff@example.com');
    await page.waitForURL('**/workspaces');
    await expect(page.textContent('main')).resolves.toContain('Signed in as garbage-xff@example.com');
    await page.context().close();
  }
  expect(await sessionAddresses('garbage-xff@example.com')).toEqual(Array(4).fill('127.0.0.1'));
});

test(
  'varying X-Forwarded-For does not get around the per-address sign-up limit',
  { timeout: 120_000 },
  async () => {
    const attempts = SIGNUPS_PER_ADDRESS + 2;
    for (let i = 0; i < attempts; i++) {
      const page = await pageWithHeaders({ 'x-forwarded-for': `198.51.100.${i + 1}` });
      await page.goto(`${suite.app.url}/sign-up`);
      await page.fill('input[name=email]', `spree-${i}@example.com`);
      await page.fill('input[name=password]', 'correct horse battery');
      await page.click('button[type=submit]');
      if (i < SIGNUPS_PER_ADDRESS) {
        await page.waitForURL('**/workspaces');
      } else {
        await expect(formError(page)).resolves.toContain('rate limit');
        if (i === attempts - 1) await page.screenshot({ path: `${screenshots}/sign-up-address-limit.png` });
      }
      await page.context().close();
    }
    const created = await suite.db.query(
      `select email from auth.users where email like 'spree-%' order by 1`,
    );
    expect(created.rows.map((r) => r.email)).toEqual(
      Array.from({ length: SIGNUPS_PER_ADDRESS }, (_, i) => `spree-${i}@example.com`),
    );
  },
);
