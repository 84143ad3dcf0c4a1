// Passkeys and security keys in a real Chromium with its virtual authenticator (CDP WebAuthn
// domain), so the browser's own navigator.credentials runs the ceremonies: adding a passkey on the
// security page, signing out and back in with it from the sign-in page, removing it; adding a
// security key as the second step (recovery codes shown once) and using it when signing in; the
// security and sign-in pages checked in light and dark at desktop and 390 px (screenshots, axe,
// nothing sideways).
import type { CDPSession, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  confirmDialog,
  signOutInBrowser,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';
import { inEveryLook, seriousViolations, shoot, sidewaysOverflow } from '../support/browser-checks.js';

let suite: BrowserSuite;
const EMAIL = 'petra@example.com';
const url = (path: string) => `${suite.app.url}${path}`;

beforeAll(async () => {
  suite = await startBrowserSuite();
});
afterAll(async () => {
  await suite?.stop();
});

/** A platform authenticator that holds discoverable credentials and verifies the user at once. */
async function virtualAuthenticator(page: Page): Promise<{ cdp: CDPSession; id: string }> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { cdp, id: authenticatorId };
}

async function credentialsOf(email: string, table: 'webauthn_credentials' | 'mfa_factors') {
  const { rows } = await suite.db.query<{ n: number }>(
    `select count(*)::int as n from auth.${table} t join auth.users u on u.id = t.user_id
     where u.email = $1${table === 'mfa_factors' ? " and t.status = 'verified'" : ''}`,
    [email],
  );
  return rows[0]!.n;
}

test('add a passkey on the security page, sign out, sign in with it, and remove it', async () => {
  const page = await signUpInBrowser(suite, EMAIL);
  const { cdp, id } = await virtualAuthenticator(page);
  await page.goto(url('/settings/security'));
  await page.getByText('No passkeys yet.').waitFor();
  await page.getByRole('button', { name: 'Add a passkey' }).click();
  await page.locator('[data-passkey]').first().waitFor();
  expect(await page.locator('[data-passkey]').count()).toBe(1);
  await expect.poll(() => credentialsOf(EMAIL, 'webauthn_credentials')).toBe(1);
  const { credentials } = await cdp.send('WebAuthn.getCredentials', { authenticatorId: id });
  expect(credentials).toHaveLength(1);
  expect(credentials[0]!.isResidentCredential).toBe(true);

  await signOutInBrowser(page);
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await page.waitForURL('**/workspaces');
  const { rows } = await suite.db.query<{ method: string }>(
    `select s.amr->0->>'method' as method from auth.sessions s join auth.users u on u.id = s.user_id
     where u.email = $1 order by s.created_at desc limit 1`,
    [EMAIL],
  );
  expect(rows[0]!.method).toBe('passkey');

  await page.goto(url('/settings/security'));
  await page.getByText(/last used/).waitFor();
  // Once more for the looks below, then removed and added again to prove removal.
  await page
    .getByRole('button', { name: /^Remove/ })
    .first()
    .click();
  await confirmDialog(page, 'Remove');
  await page.getByText('No passkeys yet.').waitFor();
  expect(await credentialsOf(EMAIL, 'webauthn_credentials')).toBe(0);
  await signOutInBrowser(page);
  await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
  await page.locator('[data-form-error]').waitFor();
  expect(await page.locator('[data-form-error]').textContent()).toContain('not registered');
  await page.context().close();
});

test('a security key as the second step: recovery codes once, then asked for at sign-in', async () => {
  const email = 'quentin@example.com';
  const page = await signUpInBrowser(suite, email);
  await virtualAuthenticator(page);
  await page.goto(url('/settings/security'));
  await page.getByRole('button', { name: 'Use a security key instead' }).click();
  await page.locator('[data-recovery-codes]').waitFor();
  expect(await page.locator('[aria-label="Recovery codes"] li').count()).toBe(10);
  expect(await credentialsOf(email, 'mfa_factors')).toBe(1);

  await signOutInBrowser(page);
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', 'correct horse battery');
  await page.click('button[type=submit]');
  await page.waitForURL('**/sign-in/two-step**');
  await page.getByText('Use your security key to continue.').waitFor();
  await page.getByRole('button', { name: 'Use your security key' }).click();
  await page.waitForURL('**/workspaces');
  const { rows } = await suite.db.query<{ aal: string; method: string }>(
    `select s.aal, s.amr->0->>'method' as method from auth.sessions s join auth.users u on u.id = s.user_id
     where u.email = $1 order by s.updated_at desc limit 1`,
    [email],
  );
  expect(rows[0]).toEqual({ aal: 'aal2', method: 'mfa/webauthn' });
  await page.context().close();
});

test('the security page with a passkey, and the sign-in page, in every look', async () => {
  const email = 'rosa@example.com';
  const setup = await signUpInBrowser(suite, email);
  await virtualAuthenticator(setup);
  await setup.goto(url('/settings/security'));
  await setup.getByRole('button', { name: 'Add a passkey' }).click();
  await setup.locator('[data-passkey]').first().waitFor();
  await setup.context().close();

  const problems: string[] = [];
  await inEveryLook(suite.browser, suite.app.url, async (page, look) => {
    await page.goto(url('/sign-in'));
    await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
    await shoot(page, `passkeys-sign-in-${look}`);
    for (const v of await seriousViolations(page)) problems.push(`sign-in ${look}: ${v.id} ${v.help}`);
    expect((await sidewaysOverflow(page)).by, look).toBeLessThanOrEqual(0);
    await page.fill('input[name=email]', email);
    await page.fill('input[name=password]', 'correct horse battery');
    await page.click('button[type=submit]');
    await page.waitForURL('**/workspaces');
    await page.goto(url('/settings/security'));
    await page.locator('[data-passkey]').first().waitFor();
    await shoot(page, `passkeys-security-${look}`);
    for (const v of await seriousViolations(page)) problems.push(`security ${look}: ${v.id} ${v.help}`);
    expect((await sidewaysOverflow(page)).by, look).toBeLessThanOrEqual(0);
  });
  expect(problems).toEqual([]);
});
