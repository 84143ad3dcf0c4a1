// Sessions in the browser over time: an access token about to expire is refreshed without asking
// for credentials (the refresh token rotates), and a session revoked elsewhere sends the user to
// sign in. Rotating is a change of state: only a POST from the app's own pages does it; a GET, a
// POST from elsewhere, or another site sending the browser to /session/refresh changes nothing.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, decodeJwt } from 'jose';
import pg from 'pg';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { readSession, sessionCookies, type StoredSession } from '../../src/server/web-session/cookies.js';
import { startApp, type AppProcess } from '../support/app-process.js';
import { launchBrowser } from '../support/browser.js';

let app: AppProcess;
let browser: Browser;
let db: pg.Client;
/** another site, on another host name (127.0.0.1 is not the app's localhost): its pages at /<name> */
let elsewhere: Server;
let elsewhereUrl: string;
const elsewherePages = new Map<string, string>();
beforeAll(async () => {
  app = await startApp();
  browser = await launchBrowser();
  db = new pg.Client({ connectionString: app.env.DATABASE_URL });
  await db.connect();
  elsewhere = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(elsewherePages.get(req.url ?? '') ?? '<!doctype html><title>elsewhere</title>');
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
}, 300_000);
afterAll(async () => {
  await db?.end();
  await new Promise((resolve) => (elsewhere ? elsewhere.close(resolve) : resolve(null)));
  await browser?.close();
  await app?.stop();
});

async function apiSession(email: string): Promise<StoredSession> {
  const res = await fetch(`${app.url}/auth/v1/signup`, {
    method: 'POST',
    headers: { apikey: app.env.PROJECT_API_KEY!, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: 'correct horse battery' }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as StoredSession;
}

/** The hash of the session's active refresh token: it changes exactly when the token rotates. */
async function activeToken(session: StoredSession): Promise<string> {
  const { session_id: id } = decodeJwt(session.access_token) as { session_id: string };
  const r = await db.query<{ hash: string }>(
    `select encode(refresh_token_hash, 'hex') as hash from auth.sessions where id = $1`,
    [id],
  );
  return r.rows[0]!.hash;
}

/** The session cookies for `session`, as the browser stores them for the app. */
function browserCookies(session: StoredSession) {
  return sessionCookies('sb-localhost-auth-token', session, [], false).map((c) => ({
    name: c.name,
    value: c.value,
    url: app.url,
    httpOnly: true,
    sameSite: 'Lax' as const,
  }));
}

test(
  'an expiring session is refreshed silently; a revoked one goes to sign in',
  { timeout: 120_000 },
  async () => {
    const context = await browser.newContext();
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    await page.goto(`${app.url}/sign-up`);
    await page.fill('input[name=email]', 'refresh@example.com');
    await page.fill('input[name=password]', 'correct horse battery');
    await page.click('button[type=submit]');
    await page.waitForURL('**/workspaces');

    // Replace the access token with one that expires in 30 s, keeping the refresh token.
    const jar = await context.cookies();
    const session = readSession(
      'sb-localhost-auth-token',
      (name) => jar.find((c) => c.name === name)?.value,
    )!;
    const claims = decodeJwt(session.access_token);
    const now = Math.floor(Date.now() / 1000);
    const expiring = await new SignJWT({ ...claims, iat: now - 3570, exp: now + 30 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(new TextEncoder().encode(app.env.JWT_SECRET!));
    const stale = { ...session, access_token: expiring, expires_at: now + 30 };
    await context.clearCookies();
    await context.addCookies(
      sessionCookies('sb-localhost-auth-token', stale, [], false).map((c) => ({
        name: c.name,
        value: c.value,
        url: app.url,
        httpOnly: true,
        sameSite: 'Lax' as const,
      })),
    );

    // The page sends the expiring session through /session/refresh, whose form posts itself.
    await page.goto(`${app.url}/workspaces`, { waitUntil: 'commit' });
    await page.waitForURL((u) => u.pathname === '/workspaces');
    await expect(page.textContent('main')).resolves.toContain('Signed in as refresh@example.com');
    const after = await context.cookies();
    const renewed = readSession(
      'sb-localhost-auth-token',
      (name) => after.find((c) => c.name === name)?.value,
    )!;
    expect(renewed.refresh_token).not.toBe(session.refresh_token);
    expect(decodeJwt(renewed.access_token).exp! - now).toBeGreaterThan(3000);

    // Revoke every session from outside (sign out everywhere via the API), then let the token expire.
    const out = await fetch(`${app.url}/auth/v1/logout?scope=global`, {
      method: 'POST',
      headers: { apikey: app.env.PROJECT_API_KEY!, authorization: `Bearer ${renewed.access_token}` },
    });
    expect(out.status).toBe(204);
    const revoked = { ...renewed, access_token: expiring };
    await context.clearCookies();
    await context.addCookies(
      sessionCookies('sb-localhost-auth-token', revoked, [], false).map((c) => ({
        name: c.name,
        value: c.value,
        url: app.url,
        httpOnly: true,
        sameSite: 'Lax' as const,
      })),
    );
    await page.goto(`${app.url}/workspaces`, { waitUntil: 'commit' });
    await page.waitForURL((u) => u.pathname === '/sign-in');
    expect((await context.cookies()).filter((c) => c.name.startsWith('sb-'))).toEqual([]);
  },
);

test('a GET or a POST from elsewhere never rotates the session', { timeout: 60_000 }, async () => {
  const session = await apiSession('no-rotation@example.com');
  const cookie = sessionCookies('sb-localhost-auth-token', session, [], false)
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');
  const before = await activeToken(session);
  const setsSession = (res: Response) => res.headers.getSetCookie().some((c) => c.startsWith('sb-'));

  for (const site of [null, 'cross-site', 'same-site', 'same-origin', 'none']) {
    const res = await fetch(`${app.url}/session/refresh?next=%2Fworkspaces`, {
      redirect: 'manual',
      headers: { cookie, ...(site ? { 'sec-fetch-site': site } : {}) },
    });
    expect(res.status, String(site)).toBe(200);
    expect(setsSession(res), String(site)).toBe(false);
    const html = await res.text();
    expect(html).toContain('<form id="refresh" method="post" action="/session/refresh">');
    // Only where the browser vouches for where the GET came from does the form post itself.
    expect(html.includes('.submit()'), String(site)).toBe(site === 'same-origin' || site === 'none');
  }

  const refused: Record<string, string>[] = [
    {},
    { origin: 'https://evil.example' },
    { origin: 'null' },
    { origin: app.url.replace('localhost', '127.0.0.1') },
    { origin: app.url, 'sec-fetch-site': 'cross-site' },
    { origin: app.url, 'sec-fetch-site': 'same-site' },
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'none' },
  ];
  for (const headers of refused) {
    const res = await fetch(`${app.url}/session/refresh`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: 'next=%2Fworkspaces',
    });
    expect(res.status, JSON.stringify(headers)).toBe(403);
    expect(setsSession(res), JSON.stringify(headers)).toBe(false);
  }
  expect(await activeToken(session)).toBe(before);

  // From the app's own page (what its form sends), the session rotates.
  const own = await fetch(`${app.url}/session/refresh`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie,
      origin: app.url,
      'sec-fetch-site': 'same-origin',
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: 'next=%2Fworkspaces',
  });
  expect(own.status).toBe(303);
  expect(setsSession(own)).toBe(true);
  expect(await activeToken(session)).not.toBe(before);
});

test(
  'another site sending the browser to /session/refresh gets a Continue button, not a rotation',
  { timeout: 60_000 },
  async () => {
    const session = await apiSession('elsewhere@example.com');
    const before = await activeToken(session);
    const context = await browser.newContext();
    context.setDefaultTimeout(15_000);
    await context.addCookies(browserCookies(session));
    const page = await context.newPage();

    // A page elsewhere navigates the browser to the refresh, and another posts to it.
    elsewherePages.set(
      '/navigate',
      `<!doctype html><title>elsewhere</title><script>location.href = ${JSON.stringify(
        `${app.url}/session/refresh?next=/settings/profile`,
      )}</script>`,
    );
    elsewherePages.set(
      '/post',
      `<!doctype html><title>elsewhere</title><form method="post" action="${app.url}/session/refresh">` +
        `<input type="hidden" name="next" value="/workspaces"></form><script>document.forms[0].submit()</script>`,
    );

    const posted = page.waitForResponse((r) => r.url() === `${app.url}/session/refresh`);
    await page.goto(`${elsewhereUrl}/post`);
    expect((await posted).status()).toBe(403);
    expect(await activeToken(session)).toBe(before);

    await page.goto(`${elsewhereUrl}/navigate`);
    await page.waitForURL((u) => u.origin === app.url && u.pathname === '/session/refresh');
    const button = page.getByRole('button', { name: 'Continue' });
    await button.waitFor();
    await expect(page.textContent('h1')).resolves.toBe('Continue to Tenantry');
    await page.waitForTimeout(500);
    expect(new URL(page.url()).pathname).toBe('/session/refresh');
    expect(await activeToken(session)).toBe(before);

    // The person choosing to go on is the app's own page posting: the session renews.
    await button.click();
    await page.waitForURL((u) => u.pathname === '/settings/profile');
    expect(await activeToken(session)).not.toBe(before);
    await expect(page.textContent('main')).resolves.toContain('elsewhere@example.com');
    await context.close();
  },
);
