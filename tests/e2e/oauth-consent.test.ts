// The OAuth consent page and Connected apps, in Chromium on the real process with the OAuth 2.1
// server on: an app sends a signed-out browser to /auth/v1/oauth/authorize; the person signs in and
// comes back to /oauth/consent, which names the app, its site and what it asks for; Allow sends the
// browser back to the app with a code the app exchanges for a token that works; Deny sends it back
// with access_denied. The Security page lists the connected app; disconnecting asks first and the
// app's token is refused from the next request. Every look (light and dark, desktop and 390 px) is
// axe clean, fits the width, and is photographed.
import { createHash, randomBytes } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { inEveryLook, seriousViolations, shoot, sidewaysOverflow } from '../support/browser-checks.js';
import {
  confirmDialog,
  newPage,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';

const REDIRECT = 'https://client.example.com/callback';

let suite: BrowserSuite;
let client: { client_id: string; client_secret: string };

beforeAll(async () => {
  suite = await startBrowserSuite({ OAUTH_SERVER_ENABLED: 'true' });
  const response = await fetch(`${suite.app.url}/auth/v1/admin/oauth/clients`, {
    method: 'POST',
    headers: {
      apikey: suite.app.env.SERVICE_ROLE_KEY!,
      authorization: `Bearer ${suite.app.env.SERVICE_ROLE_KEY!}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      client_name: 'Acme Reports',
      client_uri: 'https://client.example.com',
      redirect_uris: [REDIRECT],
    }),
  });
  expect(response.status).toBe(201);
  client = (await response.json()) as typeof client;
}, 300_000);
afterAll(async () => suite?.stop());

const url = (path: string) => `${suite.app.url}${path}`;

/** The app's side: a fresh PKCE pair and the authorize URL that starts the flow. */
function authorizeUrl(state: string) {
  const verifier = randomBytes(32).toString('base64url');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    scope: 'email profile',
    state,
  });
  return { verifier, href: url(`/auth/v1/oauth/authorize?${query}`) };
}

/** The app's callback, answered by the test (the host does not exist). */
async function serveCallback(page: Page) {
  await page
    .context()
    .route('https://client.example.com/**', (route) =>
      route.fulfill({ status: 200, contentType: 'text/html', body: '<title>Acme</title><p>back</p>' }),
    );
}

async function exchange(code: string, verifier: string) {
  const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
  const response = await fetch(url('/auth/v1/oauth/token'), {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier }).toString(),
  });
  return { status: response.status, body: (await response.json()) as Record<string, string> };
}

const workspacesWith = (token: string) =>
  fetch(url('/rest/v1/workspaces?select=id'), {
    headers: { apikey: suite.app.env.PROJECT_API_KEY!, authorization: `Bearer ${token}` },
  });

test('sign in, consent, token; deny; connected apps and disconnect', { timeout: 240_000 }, async () => {
  const email = `consent-${Date.now()}@example.com`;
  await (await signUpInBrowser(suite, email)).context().close();

  // A signed-out browser is sent to sign in, then comes back to the consent page.
  const page = await newPage(suite.browser);
  await serveCallback(page);
  const first = authorizeUrl('s-allow');
  await page.goto(first.href);
  await page.waitForURL('**/sign-in?**');
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', 'correct horse battery');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL('**/oauth/consent?authorization_id=*');
  await page.getByRole('heading', { name: 'Acme Reports wants to use your account' }).waitFor();
  expect(await page.getByRole('link', { name: /client\.example\.com/ }).count()).toBe(1);
  const asked = await page.locator('[data-scope]').allTextContents();
  expect(asked).toEqual(['See your e-mail address', 'See your name and profile picture']);
  expect(await page.textContent('[data-consent]')).toContain(email);

  const consentPath = new URL(page.url()).pathname + new URL(page.url()).search;
  const cookies = await page.context().cookies();
  await inEveryLook(suite.browser, suite.app.url, async (p, look) => {
    await p.context().addCookies(cookies.filter((c) => c.name !== 'tenantry-theme'));
    await p.goto(url(consentPath));
    await p.getByRole('button', { name: 'Allow' }).waitFor();
    expect(await seriousViolations(p), `consent ${look}`).toEqual([]);
    expect((await sidewaysOverflow(p)).by, `consent ${look}`).toBe(0);
    await shoot(p, `oauth-consent-${look}`);
  });

  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL('https://client.example.com/callback?**');
  const back = new URL(page.url());
  expect(back.searchParams.get('state')).toBe('s-allow');
  const issued = await exchange(back.searchParams.get('code')!, first.verifier);
  expect(issued.status).toBe(200);
  expect((await workspacesWith(issued.body.access_token!)).status).toBe(200);

  // A second request with a wider scope asks again; Deny goes back with access_denied.
  const second = authorizeUrl('s-deny');
  await page.goto(second.href.replace('scope=email+profile', 'scope=email+phone'));
  await page.getByRole('heading', { name: 'Acme Reports wants to use your account' }).waitFor();
  await page.getByRole('button', { name: 'Deny' }).click();
  await page.waitForURL('https://client.example.com/callback?**');
  const denied = new URL(page.url());
  expect(denied.searchParams.get('error')).toBe('access_denied');
  expect(denied.searchParams.get('state')).toBe('s-deny');
  expect(denied.searchParams.has('code')).toBe(false);

  // An answered request cannot be answered again.
  await page.goto(url(consentPath));
  await page.locator('[data-consent-gone]').waitFor();

  // Connected apps on the Security page, then disconnect.
  await page.goto(url('/settings/security'));
  const row = page.locator('[data-connected-app="Acme Reports"]');
  await row.waitFor();
  expect(await row.textContent()).toContain('client.example.com');
  await page.getByText('Acme Reports (connected app)').waitFor();
  await inEveryLook(suite.browser, suite.app.url, async (p, look) => {
    await p.context().addCookies(cookies.filter((c) => c.name !== 'tenantry-theme'));
    await p.goto(url('/settings/security'));
    await p.locator('[data-connected-app="Acme Reports"]').waitFor();
    expect(await seriousViolations(p), `security ${look}`).toEqual([]);
    expect((await sidewaysOverflow(p)).by, `security ${look}`).toBe(0);
    await p.locator('#connected-apps').scrollIntoViewIfNeeded();
    await shoot(p, `oauth-connected-apps-${look}`, { fullPage: false });
  });
  await row.getByRole('button', { name: 'Disconnect Acme Reports' }).click();
  await confirmDialog(page, 'Disconnect');
  await page.getByText('No apps are connected to your account.').waitFor();
  expect((await workspacesWith(issued.body.access_token!)).status).toBe(401);
  // the session the app held is gone from "Where you are signed in" too
  expect(await page.getByText('Acme Reports (connected app)').count()).toBe(0);
  // and the security activity tells what happened in words
  await page.getByText('An app was disconnected').first().waitFor();
  const { rows } = await suite.db.query<{ action: string }>(
    `select action from public.audit_events where target_type = 'oauth_client' and target_id = $1
      order by id`,
    [client.client_id],
  );
  expect(rows.map((r) => r.action)).toEqual([
    'oauth_client_created',
    'oauth_authorization_approved',
    'oauth_token_issued',
    'oauth_authorization_denied',
    'oauth_grant_revoked',
  ]);
});

test('without the OAuth server there is no consent page', { timeout: 120_000 }, async () => {
  // While on, a signed-out visitor is sent to sign in and back. Asked before a second process
  // starts beside this one, whose start-up would hold the machine's cores.
  const on = await fetch(url(`/oauth/consent?authorization_id=${crypto.randomUUID()}`), {
    redirect: 'manual',
  });
  expect(on.status).toBe(307);
  expect(on.headers.get('location')).toContain('/sign-in?next=%2Foauth%2Fconsent%3Fauthorization_id%3D');
  const { startApp } = await import('../support/app-process.js');
  const off = await startApp();
  try {
    const response = await fetch(`${off.url}/oauth/consent?authorization_id=${crypto.randomUUID()}`, {
      redirect: 'manual',
    });
    expect(response.status).toBe(404);
  } finally {
    await off.stop();
  }
});
