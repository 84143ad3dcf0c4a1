// Test support for browser suites: the real process, a Chromium and a database connection for
// checking what the pages did, started once per file; and signing a new user up through the page.
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

/** A fresh browser profile (its own cookies) with a page whose waits give up after 15 s. */
export async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext();
  context.setDefaultTimeout(15_000);
  return context.newPage();
}

/** Signs a new user up in a fresh profile and returns the page, on the workspace list. */
export async function signUpInBrowser(suite: BrowserSuite, email: string): Promise<Page> {
  const page = await newPage(suite.browser);
  await page.goto(`${suite.app.url}/sign-up`);
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', 'correct horse battery');
  await page.click('button[type=submit]');
  await page.waitForURL('**/workspaces');
  return page;
}
