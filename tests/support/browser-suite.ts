// Test support for browser suites: the real process, a Chromium and a database connection for
// checking what the pages did, started once per file; signing up, creating a workspace and
// signing out through the pages; reading a form's refusal and field errors; confirming dialogs;
// the newest identity e-mail written to an address.
import pg from 'pg';
import type { Browser, Page } from 'playwright-core';
import { startApp, type AppProcess } from './app-process.js';
import { launchBrowser } from './browser.js';

export interface BrowserSuite {
  app: AppProcess;
  browser: Browser;
  db: pg.Client;
  stop(): Promise<void>;
}

export async function startBrowserSuite(env: Record<string, string> = {}): Promise<BrowserSuite> {
  const app = await startApp(env);
  const browser = await launchBrowser();
  const db = new pg.Client({ connectionString: app.env.DATABASE_URL });
  await db.connect();
  return {
    app,
    browser,
    db,
    stop: async () => {
      await db.end();
      await browser.close();
      await app.stop();
    },
  };
}

/** The newest identity e-mail written to `to`: its kind, its /verify link and its 6-digit code. */
export async function latestAuthMail(
  db: pg.Client,
  to: string,
): Promise<{ kind: string; link: string; code: string | null }> {
  const { rows } = await db.query<{ kind: string; text_body: string }>(
    `select kind, text_body from internal.outbox where to_address = $1 order by id desc limit 1`,
    [to],
  );
  const text = rows[0]?.text_body ?? '';
  const link = /https?:\/\/\S+\/auth\/v1\/verify\?\S+/.exec(text)?.[0];
  if (!link) throw new Error(`no e-mail with a link for ${to}`);
  return { kind: rows[0]!.kind, link, code: /\b(\d{6})\b/.exec(text)?.[1] ?? null };
}

/** A fresh browser profile (its own cookies) with a page whose waits give up after 15 s. */
export async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext();
  context.setDefaultTimeout(15_000);
  return context.newPage();
}

/** Opens `url`, failing with what the server answered when that is not the page. */
export async function openPage(page: Page, url: string): Promise<void> {
  const response = await page.goto(url);
  if (response && !response.ok()) {
    const body = (await response.text().catch(() => '')).slice(0, 200);
    throw new Error(`${new URL(url).pathname} answered ${response.status()}: ${body}`);
  }
}

/**
 * Signs a new user up in a fresh profile where sign-ups need confirming (AUTH_AUTOCONFIRM=false)
 * and follows the e-mail's link; returns the page, signed in on the workspace list.
 */
export async function signUpAndConfirmInBrowser(
  suite: BrowserSuite,
  email: string,
  password = 'correct horse battery',
): Promise<Page> {
  const page = await newPage(suite.browser);
  await openPage(page, `${suite.app.url}/sign-up`);
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', password);
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-check-email]');
  await page.goto((await latestAuthMail(suite.db, email)).link);
  await page.waitForURL('**/workspaces');
  return page;
}

/** Signs a new user up in a fresh profile and returns the page, on the workspace list. */
export async function signUpInBrowser(suite: BrowserSuite, email: string): Promise<Page> {
  const page = await newPage(suite.browser);
  await openPage(page, `${suite.app.url}/sign-up`);
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', 'correct horse battery');
  await page.click('button[type=submit]');
  await page.waitForURL('**/workspaces');
  return page;
}

/** Creates a workspace from the workspace list; the app opens it. Returns its slug. */
export async function createWorkspaceInBrowser(
  suite: BrowserSuite,
  page: Page,
  name: string,
): Promise<string> {
  await page.goto(`${suite.app.url}/workspaces`);
  await page.fill('#new-workspace input[name=name]', name);
  await page.click('text=Create workspace');
  await page.waitForURL((url) => url.pathname.startsWith('/w/'));
  return new URL(page.url()).pathname.split('/')[2]!;
}

/** Signs out through the account menu. */
export async function signOutInBrowser(page: Page): Promise<void> {
  await page.click('[data-account-menu]');
  await page.getByRole('menuitem', { name: 'Sign out' }).click();
  await page.waitForURL('**/sign-in');
}

/** The refusal a form shows above its fields, once it appears. */
export async function formError(page: Page): Promise<string> {
  const shown = await page.waitForSelector('[data-form-error]');
  return ((await shown.textContent()) ?? '').trim();
}

/** The error shown under a field (by the field's name), once it appears. */
export async function fieldError(page: Page, name: string): Promise<string> {
  const input = page.locator(`[name="${name}"][aria-invalid=true]`).first();
  try {
    await input.waitFor();
  } catch (error) {
    // Say what the page showed instead, so a failure explains itself.
    const shown = await page
      .locator('[data-form-error], [role=alert], [role=status], [data-sonner-toast]')
      .allTextContents()
      .catch(() => [] as string[]);
    throw new Error(
      `no error under "${name}" at ${page.url()}; the page shows ${JSON.stringify(shown.filter(Boolean))}`,
      { cause: error },
    );
  }
  const id = (await input.getAttribute('aria-describedby'))!.split(' ').find((x) => x.endsWith('-error'))!;
  return ((await page.textContent(`#${id}`)) ?? '').trim();
}

/** Confirms the open confirmation dialog by its button. */
export async function confirmDialog(page: Page, button: string): Promise<void> {
  const dialog = page.getByRole('alertdialog');
  await dialog.waitFor();
  await dialog.getByRole('button', { name: button }).click();
}
