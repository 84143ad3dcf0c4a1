// Sessions in the browser over time: an access token about to expire is refreshed without asking
// for credentials (the refresh token rotates), and a session revoked elsewhere sends the user to
// sign in.
import { SignJWT, decodeJwt } from 'jose';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { readSession, sessionCookies } from '../../src/server/web-session/cookies.js';
import { startApp, type AppProcess } from '../support/app-process.js';
import { launchBrowser } from '../support/browser.js';

let app: AppProcess;
let browser: Browser;
beforeAll(async () => {
  app = await startApp();
  browser = await launchBrowser();
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

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

    await page.goto(`${app.url}/workspaces`);
    expect(new URL(page.url()).pathname).toBe('/workspaces');
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
    await page.goto(`${app.url}/workspaces`);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect((await context.cookies()).filter((c) => c.name.startsWith('sb-'))).toEqual([]);
  },
);
