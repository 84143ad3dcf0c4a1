// Billing before the operator has set up payments: customers see their plan, its limits and a
// neutral notice, never the operator's set-up steps (variable names, the webhook path); the
// operator is told by the readiness probe instead.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { inEveryLook, seriousViolations, shoot } from '../support/browser-checks.js';
import {
  createWorkspaceInBrowser,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';

let suite: BrowserSuite;

beforeAll(async () => {
  suite = await startBrowserSuite();
}, 300_000);
afterAll(async () => suite?.stop());

test('the billing page says paid plans are not available, with nothing of the set-up; readiness tells the operator', async () => {
  const owner = await signUpInBrowser(suite, 'no-billing@example.com');
  const slug = await createWorkspaceInBrowser(suite, owner, 'Unbilled');
  await owner.goto(`${suite.app.url}/w/${slug}/billing`);
  const main = (await owner.textContent('main')) ?? '';
  expect(main).toContain('Paid plans are not available here yet');
  expect(main).not.toMatch(/STRIPE|BILLING_PLANS|PAYMENT_WEBHOOK_SECRET|webhook/i);
  await expect(owner.getAttribute('[data-plan-card=free]', 'aria-current')).resolves.toBe('true');
  expect(await owner.locator('button:has-text("Upgrade")').count()).toBe(0);

  const ready = await fetch(`${suite.app.url}/api/health/ready`);
  await expect(ready.json()).resolves.toMatchObject({ status: 'ready', billing: 'not configured' });

  const problems: string[] = [];
  const cookies = await owner.context().cookies();
  await inEveryLook(suite.browser, suite.app.url, async (page, look) => {
    await page.context().addCookies(cookies.filter((c) => c.name !== 'tenantry-theme'));
    await page.goto(`${suite.app.url}/w/${slug}/billing`);
    for (const v of await seriousViolations(page)) problems.push(`${look}: ${v.id} ${v.help}`);
    await shoot(page, `billing-not-set-up-${look}`);
  });
  expect(problems).toEqual([]);
}, 120_000);
