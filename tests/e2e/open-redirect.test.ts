// No open redirect through `next`: /session/refresh, sign-in and sign-up send the browser only to
// paths of this app, whatever encoding tricks the link uses (a tab a browser drops, a backslash it
// reads as a slash, percent-encoded variants); a hostile `next` lands on the workspace list.
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { sessionCookies, type StoredSession } from '../../src/server/web-session/cookies.js';
import { newPage, startBrowserSuite, type BrowserSuite } from '../support/browser-suite.js';

let suite: BrowserSuite;
const screenshots = 'test-results/screenshots';

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  suite = await startBrowserSuite();
}, 300_000);
afterAll(async () => suite?.stop());

/** What browsers are sent to by hostile links (`next` as it appears in the query string). */
const HOSTILE_NEXT = [
  '/%09/evil.example',
  '/%0A/evil.example',
  '/%5Cevil.example',
  '%2F%2Fevil.example',
  '/%252F%252Fevil.example',
  'https://evil.example/',
  'javascript:alert(1)',
];

async function apiSession(email: string): Promise<StoredSession> {
  const res = await fetch(`${suite.app.url}/auth/v1/signup`, {
    method: 'POST',
    headers: { apikey: suite.app.env.PROJECT_API_KEY!, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery' }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as StoredSession;
}

function cookieHeader(session: StoredSession): string {
  return sessionCookies('sb-localhost-auth-token', session, [], false)
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');
}

/** The session cookies a response set, as a request's Cookie header. */
function renewedCookies(res: Response): string {
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .filter((c) => !c.endsWith('='))
    .join('; ');
}

test('/session/refresh never redirects off the app, signed in or not', async () => {
  let cookie = cookieHeader(await apiSession('refresh-next@example.com'));
  const refresh = (next: string, headers: Record<string, string>) =>
    fetch(`${suite.app.url}/session/refresh`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: suite.app.url, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: `next=${next}`,
    });
  for (const next of HOSTILE_NEXT) {
    // The GET (where pages send an expiring session) only answers a form that posts itself, to
    // the safe target.
    const page = await fetch(`${suite.app.url}/session/refresh?next=${next}`, {
      redirect: 'manual',
      headers: { cookie },
    });
    expect(page.status, next).toBe(200);
    expect(await page.text(), next).toContain('<input type="hidden" name="next" value="/workspaces">');

    const res = await refresh(next, { cookie });
    expect(res.status, next).toBe(303);
    const location = new URL(res.headers.get('location')!, suite.app.url);
    expect(location.origin, next).toBe(suite.app.url);
    expect(location.pathname, next).toBe('/workspaces');
    cookie = renewedCookies(res);
    expect(cookie, next).toContain('sb-localhost-auth-token');
  }

  // A local path is still honoured.
  const ok = await refresh('%2Fsettings%2Fprofile', { cookie });
  expect(new URL(ok.headers.get('location')!).pathname).toBe('/settings/profile');

  // Signed out: sent to sign in, carrying only the safe target.
  for (const next of HOSTILE_NEXT) {
    for (const res of [
      await fetch(`${suite.app.url}/session/refresh?next=${next}`, { redirect: 'manual' }),
      await refresh(next, {}),
    ]) {
      expect(res.status, next).toBe(303);
      const location = new URL(res.headers.get('location')!);
      expect(location.origin, next).toBe(suite.app.url);
      expect(location.pathname, next).toBe('/sign-in');
      expect(location.searchParams.get('next'), next).toBe('/workspaces');
    }
  }
});

test('sign-up and sign-in with a hostile next land on the workspace list', { timeout: 120_000 }, async () => {
  const onApp = (url: URL) => url.origin === suite.app.url && url.pathname === '/workspaces';

  const page = await newPage(suite.browser);
  await page.goto(`${suite.app.url}/sign-up?next=/%09/evil.example`);
  await page.fill('input[name=email]', 'hostile-next@example.com');
  await page.fill('input[name=password]', 'correct horse battery');
  await page.click('button[type=submit]');
  await page.waitForURL(onApp);
  await expect(page.textContent('h1')).resolves.toBe('Your workspaces');

  for (const next of ['/%09/evil.example', '/%5Cevil.example', '%2F%2Fevil.example']) {
    await page.context().clearCookies();
    await page.goto(`${suite.app.url}/sign-in?next=${next}`);
    await page.fill('input[name=email]', 'hostile-next@example.com');
    await page.fill('input[name=password]', 'correct horse battery');
    await page.click('button[type=submit]');
    await page.waitForURL(onApp);
  }
  await page.screenshot({ path: `${screenshots}/sign-in-hostile-next.png` });

  // The same hostile next posted straight to the action (no page to clean it up first).
  await page.context().clearCookies();
  await page.goto(`${suite.app.url}/sign-in`);
  await page.evaluate(() => {
    document.querySelector<HTMLInputElement>('input[name=next]')!.value = '/\t/evil.example';
  });
  await page.fill('input[name=email]', 'hostile-next@example.com');
  await page.fill('input[name=password]', 'correct horse battery');
  await page.click('button[type=submit]');
  await page.waitForURL(onApp);

  // A local next is still where sign-in goes.
  await page.context().clearCookies();
  await page.goto(`${suite.app.url}/sign-in?next=${encodeURIComponent('/settings/profile')}`);
  await page.fill('input[name=email]', 'hostile-next@example.com');
  await page.fill('input[name=password]', 'correct horse battery');
  await page.click('button[type=submit]');
  await page.waitForURL((url) => url.origin === suite.app.url && url.pathname === '/settings/profile');
});
