// The reset-password page sets a new password without the current one only from a recent recovery
// session (the one the e-mailed reset link opened, within RECOVERY_SESSION_WINDOW). A session
// signed in with the password, or a reset link's session past the window, is sent to the profile
// page (whose form asks for the current password), and the page's action refuses it too, even
// when it posts the form a recovery session was shown: the password stays as it was.
import pg from 'pg';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { AppProcess } from '../support/app-process.js';
import { latestAuthMail, newPage, startBrowserSuite, type BrowserSuite } from '../support/browser-suite.js';
import { flashAfter } from '../support/flash.js';

const WINDOW_SECONDS = 20;
const PASSWORD = 'correct horse battery';

let suite: BrowserSuite;
let app: AppProcess;
let db: pg.Client;

beforeAll(async () => {
  suite = await startBrowserSuite({ RECOVERY_SESSION_WINDOW: String(WINDOW_SECONDS) });
  ({ app, db } = suite);
}, 300_000);
afterAll(async () => suite?.stop());

let counter = 0;
async function newAccount(): Promise<string> {
  const email = `reset${++counter}-${Date.now()}@example.com`;
  const res = await fetch(`${app.url}/auth/v1/signup`, {
    method: 'POST',
    headers: { apikey: app.env.PROJECT_API_KEY!, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD }),
  });
  expect(res.status).toBe(200);
  return email;
}

async function signsIn(email: string, password: string): Promise<boolean> {
  const res = await fetch(`${app.url}/auth/v1/token?grant_type=password`, {
    method: 'POST',
    headers: { apikey: app.env.PROJECT_API_KEY!, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  return res.status === 200;
}

/** A page signed in by the e-mailed reset link, on the new-password form. */
async function recoveryPage(email: string): Promise<Page> {
  const page = await newPage(suite.browser);
  await page.goto(`${app.url}/forgot-password`);
  await page.fill('input[name=email]', email);
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-sent]');
  const mail = await latestAuthMail(db, email);
  expect(mail.kind).toBe('auth.recovery');
  await page.goto(mail.link);
  await page.waitForURL('**/reset-password');
  await page.waitForSelector('input[name=password]');
  return page;
}

/** A page signed in with the password, through the sign-in form. */
async function passwordPage(email: string): Promise<Page> {
  const page = await newPage(suite.browser);
  await page.goto(`${app.url}/sign-in`);
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL('**/workspaces');
  return page;
}

/** Replaces the session of `target` with the one `source` holds. */
async function swapSession(target: BrowserContext, source: BrowserContext): Promise<void> {
  const cookies = (await source.cookies()).filter((c) => c.name.startsWith('sb-'));
  expect(cookies.length).toBeGreaterThan(0);
  await target.clearCookies();
  await target.addCookies(cookies);
}

test('a recent recovery session sets the new password without the current one', async () => {
  const email = await newAccount();
  const page = await recoveryPage(email);
  await page.fill('input[name=password]', 'recovered new password');
  await expect(flashAfter(page, () => page.click('button[type=submit]'))).resolves.toEqual({
    kind: 'notice',
    text: 'Password set; you are signed in',
  });
  await page.waitForURL('**/workspaces');
  expect(await signsIn(email, 'recovered new password')).toBe(true);
}, 90_000);

test('a session signed in with the password is sent to the profile page, which asks for the current one', async () => {
  const email = await newAccount();
  const page = await passwordPage(email);
  await page.goto(`${app.url}/reset-password`);
  await page.waitForURL('**/settings/profile');
  expect(await page.locator('input[name=current_password]').count()).toBe(1);
}, 90_000);

test('the reset form posted from a password session is refused, and the password stays', async () => {
  const email = await newAccount();
  const page = await recoveryPage(email);
  const other = await passwordPage(email);
  // The form a recovery session was shown, sent with a session that signed in by password.
  await swapSession(page.context(), other.context());
  await page.fill('input[name=password]', 'taken over password');
  const shown = await flashAfter(page, () => page.click('button[type=submit]'));
  expect(shown.kind).toBe('error');
  await page.waitForURL('**/settings/profile');
  expect(await signsIn(email, 'taken over password')).toBe(false);
  expect(await signsIn(email, PASSWORD)).toBe(true);
}, 90_000);

test("a reset link's session past the window no longer sets a password without the current one", async () => {
  const email = await newAccount();
  const page = await recoveryPage(email);
  await page.waitForTimeout((WINDOW_SECONDS + 1) * 1000);
  await page.fill('input[name=password]', 'too late password');
  const shown = await flashAfter(page, () => page.click('button[type=submit]'));
  expect(shown.kind).toBe('error');
  await page.waitForURL('**/settings/profile');
  expect(await signsIn(email, 'too late password')).toBe(false);
  expect(await signsIn(email, PASSWORD)).toBe(true);
  // And the page itself now sends that session to the profile.
  await page.goto(`${app.url}/reset-password`);
  await page.waitForURL('**/settings/profile');
}, 120_000);
