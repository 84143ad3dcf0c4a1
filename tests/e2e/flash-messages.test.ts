// Messages on pages are only what the server said to this browser: a link that carries
// ?error=… or ?notice=… (a phishing tool: "Your account is suspended. Call …") shows nothing on
// any page, a flash cookie the server did not sign shows nothing, and the notices and refusals
// real actions produce still appear once, on the page the action led to, with or without script.
import { mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { flashAfter } from '../support/flash.js';
import {
  confirmDialog,
  createWorkspaceInBrowser,
  fieldError,
  formError,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';

let suite: BrowserSuite;
let owner: Page;
let slug: string;
const screenshots = 'test-results/screenshots';
const PHISH = 'Your account is suspended. Call +1 555 0100 to restore access';

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  suite = await startBrowserSuite();
  owner = await signUpInBrowser(suite, 'flash-owner@example.com');
  slug = await createWorkspaceInBrowser(suite, owner, 'Flash Works');
}, 300_000);
afterAll(async () => suite?.stop());

const crafted = (path: string) => {
  const query = new URLSearchParams({ error: PHISH, notice: PHISH, message: PHISH, created: PHISH });
  return `${path}${path.includes('?') ? '&' : '?'}${query}`;
};

test('a crafted ?error= or ?notice= link shows nothing on any page', { timeout: 120_000 }, async () => {
  const signedInPages = [
    `/w/${slug}`,
    `/w/${slug}/members`,
    `/w/${slug}/settings`,
    `/w/${slug}/billing`,
    '/workspaces',
    '/settings/profile',
    '/settings/notifications',
    '/invitations/accept?token=abc',
  ];
  for (const path of signedInPages) {
    await owner.goto(`${suite.app.url}${crafted(path)}`);
    await expect(owner.innerText('body'), path).resolves.not.toContain(PHISH);
    expect(await owner.locator('main [role=alert], main [role=status]').count(), path).toBe(0);
  }
  await owner.goto(`${suite.app.url}${crafted(`/w/${slug}`)}`);
  await owner.screenshot({ path: `${screenshots}/crafted-error-link.png` });

  const visitor = await suite.browser.newContext();
  const page = await visitor.newPage();
  for (const path of ['/sign-in', '/sign-up', '/invitations/accept?token=abc']) {
    await page.goto(`${suite.app.url}${crafted(path)}`);
    await expect(page.innerText('body'), path).resolves.not.toContain(PHISH);
    expect(await page.locator('main [role=alert], main [role=status]').count(), path).toBe(0);
  }
  await visitor.close();
});

test('a flash cookie the server did not sign shows nothing', async () => {
  const payload = (text: string) =>
    Buffer.from(
      JSON.stringify({ i: 'x', k: 'error', t: text, e: Math.floor(Date.now() / 1000) + 60 }),
    ).toString('base64url');
  for (const value of [payload(PHISH), `${payload(PHISH)}.${'A'.repeat(43)}`, PHISH]) {
    await owner.context().addCookies([{ name: 'tenantry-flash', value, url: suite.app.url }]);
    await owner.goto(`${suite.app.url}/w/${slug}`);
    await expect(owner.innerText('body')).resolves.not.toContain(PHISH);
  }
  await owner.context().clearCookies({ name: 'tenantry-flash' });
});

test('real notices and refusals show once, on the page the action led to', { timeout: 120_000 }, async () => {
  await owner.goto(`${suite.app.url}/w/${slug}`);
  await owner.fill('input[name=name]', 'Difference Engine');
  await expect(flashAfter(owner, () => owner.click('text=Add project'))).resolves.toEqual({
    kind: 'notice',
    text: 'Project created',
  });
  expect(new URL(owner.url()).search).toBe('');
  await owner.screenshot({ path: `${screenshots}/flash-notice.png` });
  // Shown once: the next page load does not repeat it.
  await owner.reload();
  await owner.waitForSelector('ul[aria-label=Projects] >> text=Difference Engine');
  expect(await owner.locator('[data-flash]').count()).toBe(0);

  // A refusal of a one-click action is shown as an alert toast: removing a member who left while
  // the page was open.
  await signUpInBrowser(suite, 'flash-leaver@example.com').then((p) => p.context().close());
  await suite.db.query(
    `insert into public.workspace_members (workspace_id, user_id, role)
     select w.id, p.id, 'member' from public.workspaces w, public.profiles p
     where w.slug = $1 and p.email = 'flash-leaver@example.com'`,
    [slug],
  );
  await owner.goto(`${suite.app.url}/w/${slug}/members`);
  await suite.db.query(
    `delete from public.workspace_members where user_id = (select id from public.profiles where email = 'flash-leaver@example.com')`,
  );
  await owner.click('[aria-label="Remove flash-leaver@example.com"]');
  const refused = await flashAfter(owner, () => confirmDialog(owner, 'Remove member'));
  expect(refused).toEqual({ kind: 'error', text: 'Not found, or you do not have access to it' });
  expect(await owner.locator('[data-flash=error][role=alert]').count()).toBe(1);

  // Refusals in a form appear above its fields, with what was typed kept.
  await owner.goto(`${suite.app.url}/w/${slug}/settings`);
  await owner.click('text=Delete workspace');
  await owner.fill('input[name=confirm]', 'not-the-slug');
  await owner.getByRole('dialog').getByRole('button', { name: 'Delete this workspace' }).click();
  await expect(fieldError(owner, 'confirm')).resolves.toBe(`Type ${slug} to confirm`);
  expect(await owner.inputValue('input[name=confirm]')).toBe('not-the-slug');
  await owner.screenshot({ path: `${screenshots}/flash-error.png` });

  // Wrong password on the sign-in page: the refusal comes from the server, not the URL.
  const visitor = await suite.browser.newContext();
  const page = await visitor.newPage();
  await page.goto(`${suite.app.url}/sign-in`);
  await page.fill('input[name=email]', 'flash-owner@example.com');
  await page.fill('input[name=password]', 'wrong password');
  await page.click('button[type=submit]');
  await expect(formError(page)).resolves.toBe('Invalid login credentials');
  expect(new URL(page.url()).searchParams.has('error')).toBe(false);
  await visitor.close();
});

test('without script, forms still lead to their notice', { timeout: 120_000 }, async () => {
  const context = await suite.browser.newContext({ javaScriptEnabled: false });
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  await page.goto(`${suite.app.url}/sign-in`);
  await page.fill('input[name=email]', 'flash-owner@example.com');
  await page.fill('input[name=password]', 'correct horse battery');
  await page.click('button[type=submit]');
  await page.waitForURL('**/workspaces');
  await page.goto(`${suite.app.url}/settings/profile`);
  await page.fill('input[name=display_name]', 'Ada');
  await page.click('text=Save profile');
  await page.waitForSelector('[data-flash=notice]');
  await expect(page.textContent('[data-flash=notice]')).resolves.toBe('Profile saved');
  await context.close();
});
