// The web app in a real Chromium against the real process: a visitor is sent to sign in, signs
// up, creates a workspace and sees it, the session lives in HttpOnly SameSite=Lax cookies in the
// @supabase/ssr format (the real @supabase/ssr server client reads it), and sign-out ends it.
import { mkdirSync } from 'node:fs';
import { createServerClient } from '@supabase/ssr';
import type { Browser } from 'playwright-core';
import ws from 'ws';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startApp, type AppProcess } from '../support/app-process.js';
import { launchBrowser } from '../support/browser.js';
import { formError, signOutInBrowser } from '../support/browser-suite.js';

let app: AppProcess;
let browser: Browser;
const screenshots = 'test-results/screenshots';

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  app = await startApp();
  browser = await launchBrowser();
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

test('sign up, create a workspace, see it; the cookie session works with @supabase/ssr; sign out', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();

  await page.goto(`${app.url}/workspaces`);
  expect(new URL(page.url()).pathname).toBe('/sign-in');

  await page.goto(`${app.url}/sign-up`);
  await page.fill('input[name=email]', 'ada@example.com');
  await page.fill('input[name=password]', 'correct horse battery');
  await page.click('button[type=submit]');
  await page.waitForURL('**/workspaces');
  await page.screenshot({ path: `${screenshots}/workspaces-empty.png` });

  await page.fill('input[name=name]', 'Analytical Engines');
  await page.click('text=Create workspace');
  // Creating a workspace opens it, with the outcome as a toast.
  await page.waitForURL('**/w/analytical-engines');
  await page.waitForSelector('[data-flash=notice]:has-text("Workspace Analytical Engines created")');
  await page.goto(`${app.url}/workspaces`);
  await expect(page.textContent('ul[aria-label=Workspaces]')).resolves.toContain('Analytical Engines');
  await page.screenshot({ path: `${screenshots}/workspaces.png` });

  const cookies = await context.cookies();
  const session = cookies.filter((c) => c.name.startsWith('sb-localhost-auth-token'));
  expect(session.length).toBeGreaterThan(0);
  for (const cookie of session) {
    expect(cookie.httpOnly).toBe(true);
    expect(cookie.sameSite).toBe('Lax');
    expect(cookie.value.startsWith('base64-') || /\.\d+$/.test(cookie.name)).toBe(true);
  }

  // The same cookies, handed to the real @supabase/ssr server client, are a valid session.
  const ssr = createServerClient(app.url, app.env.PROJECT_API_KEY!, {
    cookies: {
      getAll: () => session.map((c) => ({ name: c.name, value: c.value })),
      setAll: () => undefined,
    },
    realtime: { transport: ws as unknown as typeof WebSocket },
  });
  const { data, error } = await ssr.auth.getUser();
  expect(error).toBeNull();
  expect(data.user?.email).toBe('ada@example.com');
  const { data: rows } = await ssr.from('workspaces').select('name');
  expect(rows).toEqual([{ name: 'Analytical Engines' }]);

  await signOutInBrowser(page);
  expect((await context.cookies()).filter((c) => c.name.startsWith('sb-'))).toEqual([]);
  await page.goto(`${app.url}/workspaces`);
  expect(new URL(page.url()).pathname).toBe('/sign-in');
  await context.close();
});

test('a wrong password is shown as such, and nothing is stored', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${app.url}/sign-in`);
  await page.fill('input[name=email]', 'nobody@example.com');
  await page.fill('input[name=password]', 'wrong password');
  await page.click('button[type=submit]');
  await expect(formError(page)).resolves.toContain('Invalid login credentials');
  // The e-mail is kept; the password is not.
  expect(await page.inputValue('input[name=email]')).toBe('nobody@example.com');
  expect(await page.inputValue('input[name=password]')).toBe('');
  expect((await context.cookies()).filter((c) => c.name.startsWith('sb-'))).toEqual([]);
  await context.close();
});

test('a session signed out elsewhere, or an account banned, loses the pages at once', async () => {
  const { default: pg } = await import('pg');
  const db = new pg.Client({ connectionString: app.env.DATABASE_URL });
  await db.connect();
  try {
    for (const [label, end] of [
      [
        'signed-out',
        'delete from auth.sessions where user_id = (select id from auth.users where email = $1)',
      ],
      ['banned', `update auth.users set banned_until = now() + interval '1 day' where email = $1`],
    ] as const) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const email = `${label}@example.com`;
      await page.goto(`${app.url}/sign-up`);
      await page.fill('input[name=email]', email);
      await page.fill('input[name=password]', 'correct horse battery');
      await page.click('button[type=submit]');
      await page.waitForURL('**/workspaces');
      // The access token in the cookie is still unexpired; only the database knows it is over.
      await db.query(end, [email]);
      await page.goto(`${app.url}/workspaces`);
      expect(new URL(page.url()).pathname).toBe('/sign-in');
      await context.close();
    }
  } finally {
    await db.end();
  }
});
