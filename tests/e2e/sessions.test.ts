// Sessions a user controls, in a real browser: the Security page lists where the account is
// signed in (browser and system, address, when), marks this browser, signs out one other session
// or all of them, and whatever was signed out stops at once (its pages and its API token).
import { createClient } from '@supabase/supabase-js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import ws from 'ws';
import { inEveryLook, seriousViolations, shoot, sidewaysOverflow } from '../support/browser-checks.js';
import {
  confirmDialog,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';
import { flashAfter } from '../support/flash.js';

let suite: BrowserSuite;

beforeAll(async () => {
  suite = await startBrowserSuite();
}, 300_000);
afterAll(async () => suite?.stop());

const FIREFOX_ON_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';

async function signInAs(browser: Browser, email: string, userAgent?: string): Promise<Page> {
  const context = await browser.newContext(userAgent ? { userAgent } : {});
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  await page.goto(`${suite.app.url}/sign-in`);
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', 'correct horse battery');
  await page.click('button[type=submit]');
  await page.waitForURL('**/workspaces');
  return page;
}

function apiClient() {
  return createClient(suite.app.url, suite.app.env.PROJECT_API_KEY!, {
    auth: { persistSession: false, autoRefreshToken: false },
    realtime: { transport: ws as never },
  });
}

async function apiTokenWorks(token: string): Promise<boolean> {
  const res = await fetch(`${suite.app.url}/auth/v1/user`, {
    headers: { apikey: suite.app.env.PROJECT_API_KEY!, authorization: `Bearer ${token}` },
  });
  await res.arrayBuffer();
  return res.status === 200;
}

test('the Security page lists the sessions; one is signed out, then all others, and they stop at once', async () => {
  const here = await signUpInBrowser(suite, 'sessions@example.com');
  const firefox = await signInAs(suite.browser, 'sessions@example.com', FIREFOX_ON_WINDOWS);
  const api = apiClient();
  const { data, error } = await api.auth.signInWithPassword({
    email: 'sessions@example.com',
    password: 'correct horse battery',
  });
  expect(error).toBeNull();
  const apiToken = data.session!.access_token;

  await here.goto(`${suite.app.url}/settings/security`);
  const rows = here.locator('[data-session]');
  await expect(rows.count()).resolves.toBe(3);
  const current = here.locator('[data-session=current]');
  await expect(current.textContent()).resolves.toContain('This browser');
  await expect(current.textContent()).resolves.toMatch(/Chrome|Chromium/);
  const listed = (await here.locator('[data-session=other]').allTextContents()).join('\n');
  expect(listed).toContain('Firefox 133 on Windows');
  expect(listed).toContain('127.0.0.1');

  // One other session: the Firefox one. Its pages go back to sign-in; the API session stays.
  await expect(
    flashAfter(here, () => here.getByRole('button', { name: /^Sign out Firefox 133 on Windows/ }).click()),
  ).resolves.toEqual({ kind: 'notice', text: 'Signed out of that session' });
  await expect(rows.count()).resolves.toBe(2);
  await firefox.goto(`${suite.app.url}/settings/security`);
  expect(new URL(firefox.url()).pathname).toBe('/sign-in');
  expect(await apiTokenWorks(apiToken)).toBe(true);

  // All others: the API session ends too, its token refused at once; this browser stays.
  await here.getByRole('button', { name: 'Sign out all other sessions' }).click();
  await expect(flashAfter(here, () => confirmDialog(here, 'Sign out other sessions'))).resolves.toEqual({
    kind: 'notice',
    text: 'Signed out everywhere else; this session stays signed in',
  });
  await expect(rows.count()).resolves.toBe(1);
  await expect(here.textContent('main')).resolves.toContain('You are signed in nowhere else.');
  expect(await apiTokenWorks(apiToken)).toBe(false);
  await here.goto(`${suite.app.url}/settings/security`);
  expect(new URL(here.url()).pathname).toBe('/settings/security');
}, 120_000);

test('one user cannot sign out another user’s session by posting its id', async () => {
  const victim = await signUpInBrowser(suite, 'victim-sessions@example.com');
  const victimSession = await suite.db.query<{ id: string }>(
    `select s.id from auth.sessions s join auth.users u on u.id = s.user_id where u.email = $1`,
    ['victim-sessions@example.com'],
  );
  const attacker = await signUpInBrowser(suite, 'attacker-sessions@example.com');
  await attacker.goto(`${suite.app.url}/settings/security`);
  // Another browser of the attacker's, so the form to sign out "another session" is on the page.
  await signInAs(suite.browser, 'attacker-sessions@example.com');
  await attacker.reload();
  const form = attacker.locator('[data-session=other] form').first();
  await form.locator('input[name=session_id]').evaluate((input, id) => {
    (input as HTMLInputElement).value = id;
  }, victimSession.rows[0]!.id);
  await expect(flashAfter(attacker, () => form.locator('button').click())).resolves.toEqual({
    kind: 'error',
    text: 'That session has already ended',
  });
  await victim.goto(`${suite.app.url}/settings/security`);
  expect(new URL(victim.url()).pathname).toBe('/settings/security');
}, 90_000);

test('the Security page with its sessions: accessible in both themes, at desktop and phone width; screenshots', async () => {
  await signUpInBrowser(suite, 'looks-sessions@example.com');
  await signInAs(suite.browser, 'looks-sessions@example.com', FIREFOX_ON_WINDOWS);
  const problems: string[] = [];
  await inEveryLook(suite.browser, suite.app.url, async (page, look) => {
    await page.goto(`${suite.app.url}/sign-in`);
    await page.fill('input[name=email]', 'looks-sessions@example.com');
    await page.fill('input[name=password]', 'correct horse battery');
    await page.click('button[type=submit]');
    await page.waitForURL('**/workspaces');
    await page.goto(`${suite.app.url}/settings/security`);
    await page.locator('[data-session]').first().waitFor();
    for (const v of await seriousViolations(page)) problems.push(`${look}: ${v.id} ${v.help}`);
    expect((await sidewaysOverflow(page)).by).toBeLessThanOrEqual(0);
    await shoot(page, `security-sessions-${look}`);
  });
  expect(problems).toEqual([]);
}, 120_000);

test('setting up an authenticator app offers an otpauth link for this phone and can be cancelled', async () => {
  const page = await signUpInBrowser(suite, 'cancels-totp@example.com');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${suite.app.url}/settings/security`);
  await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
  const link = page.getByRole('link', { name: 'Open it in your authenticator app' });
  await expect(link.getAttribute('href')).resolves.toMatch(/^otpauth:\/\/totp\/.+secret=[A-Z2-7]+/);
  const factors = () =>
    suite.db.query(
      `select f.status from auth.mfa_factors f join auth.users u on u.id = f.user_id where u.email = $1`,
      ['cancels-totp@example.com'],
    );
  expect((await factors()).rows).toEqual([{ status: 'unverified' }]);

  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.getByRole('button', { name: 'Set up an authenticator app' }).waitFor();
  expect(await page.locator('img[alt^="QR code"]').count()).toBe(0);
  await expect.poll(async () => (await factors()).rowCount).toBe(0);
}, 60_000);
