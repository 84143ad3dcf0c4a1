// Two-step verification in a real Chromium, with codes computed by otpauth as a phone app would:
// setting up an authenticator app from the security page (QR code and secret, a wrong code
// refused, recovery codes shown once), requiring it in a workspace, the second step at sign-in
// with a code and with a recovery code (used once), a member without it sent to the page that
// explains, and turning it off.
import { Secret, TOTP } from 'otpauth';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  confirmDialog,
  createWorkspaceInBrowser,
  fieldError,
  latestAuthMail,
  newPage,
  signOutInBrowser,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';
import { flashAfter } from '../support/flash.js';

let suite: BrowserSuite;
let page: Page;
let secret: string;
let recoveryCodes: string[];
let slug: string;
const EMAIL = 'ida@example.com';

const url = (path: string) => `${suite.app.url}${path}`;
const codeFor = (at = Date.now()) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp: at,
  });

let password = 'correct horse battery';

async function signInWithPassword(p: Page, email = EMAIL) {
  await p.goto(url('/sign-in'));
  await p.fill('input[name=email]', email);
  await p.fill('input[name=password]', password);
  await p.click('button[type=submit]');
}

/** The code of the step after the last one used: a code is accepted once, so the next one is due. */
async function nextCode(): Promise<string> {
  const r = await suite.db.query<{ step: string }>(
    `select last_used_step as step from auth.mfa_factors f join auth.users u on u.id = f.user_id
     where u.email = $1`,
    [EMAIL],
  );
  const next = Math.max(Number(r.rows[0]!.step) + 1, Math.floor(Date.now() / 30_000));
  // The service accepts the current step and the ones either side: two codes in quick succession
  // may have to wait for the clock to come within one step of the second.
  const wait = (next - 1) * 30_000 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait + 200));
  return codeFor(next * 30_000);
}

beforeAll(async () => {
  suite = await startBrowserSuite();
  page = await signUpInBrowser(suite, EMAIL);
  slug = await createWorkspaceInBrowser(suite, page, 'Secure Co');
}, 300_000);
afterAll(async () => suite?.stop());

test(
  'setting up an authenticator app: QR code and secret, a wrong code refused, recovery codes shown once',
  {
    timeout: 60_000,
  },
  async () => {
    await page.goto(url('/settings/security'));
    await page.getByRole('heading', { name: /Two-step verification/ }).waitFor();
    await page.click('text=Set up an authenticator app');
    const qr = page.locator('img[alt="QR code to scan with your authenticator app"]');
    await qr.waitFor();
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/);
    secret = ((await page.textContent('[data-totp-secret]')) ?? '').trim();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);

    await page.fill('input[name=code]', '000000');
    await page.click('text=Turn on two-step verification');
    expect(await fieldError(page, 'code')).toContain('not right');

    await page.fill('input[name=code]', codeFor());
    await page.click('text=Turn on two-step verification');
    await page.waitForSelector('[data-recovery-codes]');
    recoveryCodes = await page.locator('[aria-label="Recovery codes"] li').allTextContents();
    expect(recoveryCodes).toHaveLength(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[a-z0-9]{5}-[a-z0-9]{5}$/);
    const download = page.getByRole('link', { name: 'Download' });
    expect(decodeURIComponent((await download.getAttribute('href')) ?? '')).toContain(recoveryCodes[0]);

    // Shown once: the page afterwards says it is on and how many codes are left, not the codes.
    await page.click('text=I have saved them');
    await page.getByText('10 of 10 left').waitFor();
    expect(await page.locator('[aria-label="Recovery codes"]').count()).toBe(0);
    const session = await suite.db.query<{ aal: string }>(
      `select s.aal from auth.sessions s join auth.users u on u.id = s.user_id where u.email = $1`,
      [EMAIL],
    );
    expect(session.rows.map((r) => r.aal)).toEqual(['aal2']);
  },
);

test('the owner, at aal2, requires two-step verification in the workspace', { timeout: 30_000 }, async () => {
  await page.goto(url(`/w/${slug}/settings`));
  // It asks first: members without two-step verification lose access at once.
  await page.click('text=Require two-step verification');
  await expect(page.getByRole('alertdialog').textContent()).resolves.toContain('lose access');
  await expect(flashAfter(page, () => confirmDialog(page, 'Require it'))).resolves.toEqual({
    kind: 'notice',
    text: 'Members now need two-step verification here',
  });
  const stored = await suite.db.query('select require_mfa from public.workspaces where slug = $1', [slug]);
  expect(stored.rows[0]).toEqual({ require_mfa: true });
});

test(
  'signing in asks for the second step before anything else; a code from the app completes it',
  {
    timeout: 60_000,
  },
  async () => {
    await signOutInBrowser(page);
    await signInWithPassword(page);
    await page.waitForURL('**/sign-in/two-step**');
    // Nothing else opens meanwhile.
    await page.goto(url(`/w/${slug}`));
    expect(new URL(page.url()).pathname).toBe('/sign-in/two-step');

    await page.fill('input[name=code]', '000000');
    await page.click('button:has-text("Continue")');
    expect(await fieldError(page, 'code')).toContain('not right');
    await page.fill('input[name=code]', await nextCode());
    await page.click('button:has-text("Continue")');
    await page.waitForURL(`**/w/${slug}`);
    await page.getByRole('heading', { name: 'Secure Co' }).waitFor();
  },
);

test('a recovery code completes the second step once', { timeout: 60_000 }, async () => {
  await signOutInBrowser(page);
  await signInWithPassword(page);
  await page.waitForURL('**/sign-in/two-step**');
  await page.click('text=Use a recovery code instead');
  await page.fill('input[name=code]', recoveryCodes[0]!);
  await expect(flashAfter(page, () => page.click('button:has-text("Continue")'))).resolves.toMatchObject({
    kind: 'notice',
    text: expect.stringContaining('9 left'),
  });
  expect(new URL(page.url()).pathname).toBe('/workspaces');

  await signOutInBrowser(page);
  await signInWithPassword(page);
  await page.waitForURL('**/sign-in/two-step**');
  await page.click('text=Use a recovery code instead');
  await page.fill('input[name=code]', recoveryCodes[0]!);
  await page.click('button:has-text("Continue")');
  expect(await fieldError(page, 'code')).toContain('not one of your unused recovery codes');
  await page.fill('input[name=code]', recoveryCodes[1]!);
  await page.click('button:has-text("Continue")');
  await page.waitForURL('**/workspaces');
});

test(
  'a member without two-step verification is told what the workspace needs, and sees none of it',
  {
    timeout: 60_000,
  },
  async () => {
    const member = await signUpInBrowser(suite, 'max@example.com');
    await suite.db.query(
      `insert into public.workspace_members (workspace_id, user_id, role)
     select w.id, u.id, 'member' from public.workspaces w, auth.users u where w.slug = $1 and u.email = $2`,
      [slug, 'max@example.com'],
    );
    await member.goto(url('/workspaces'));
    await member.getByText('Waiting for two-step verification').waitFor();
    await member.goto(url(`/w/${slug}`));
    expect(new URL(member.url()).pathname).toBe(`/two-step-required/${slug}`);
    await member.getByText('This workspace requires two-step verification').waitFor();
    expect(await member.textContent('main')).toContain('Secure Co');
    await member.context().close();

    // The same page for someone who is not a member is simply not found.
    const stranger = await newPage(suite.browser);
    await stranger.goto(url('/sign-up'));
    const outsider = await signUpInBrowser(suite, 'eve@example.com');
    const res = await outsider.goto(url(`/two-step-required/${slug}`));
    expect(res!.status()).toBe(404);
    await stranger.context().close();
    await outsider.context().close();
  },
);

test('signing out from the second step ends the half-done session', { timeout: 60_000 }, async () => {
  const other = await newPage(suite.browser);
  await signInWithPassword(other);
  await other.waitForURL('**/sign-in/two-step**');
  await other.click('button:has-text("Sign out")');
  await other.waitForURL('**/sign-in');
  await other.goto(url('/workspaces'));
  expect(new URL(other.url()).pathname).toBe('/sign-in');
  await other.context().close();
});

test(
  'a forgotten password with two-step on: the reset link asks for the second step, then sets the password',
  { timeout: 60_000 },
  async () => {
    // In the signed-in browser: the link's recovery session replaces the current one.
    await page.goto(url('/forgot-password'));
    await page.fill('input[name=email]', EMAIL);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-sent]');
    const mail = await latestAuthMail(suite.db, EMAIL);
    expect(mail.kind).toBe('auth.recovery');
    const link = mail.link;
    await page.goto(link);
    // The link proves the mailbox only: the authenticator app comes first.
    await page.waitForURL('**/sign-in/two-step**');
    await page.fill('input[name=code]', await nextCode());
    await page.click('button:has-text("Continue")');
    await page.getByRole('heading', { name: 'Set a new password' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/reset-password');
    password = 'a whole new password';
    await page.fill('input[name=password]', password);
    await expect(flashAfter(page, () => page.click('button[type=submit]'))).resolves.toEqual({
      kind: 'notice',
      text: 'Password set; you are signed in',
    });
    await page.waitForURL('**/workspaces');
  },
);

test(
  'turning two-step verification off asks first, then signing in needs only the password',
  {
    timeout: 60_000,
  },
  async () => {
    await page.goto(url('/settings/security'));
    await page.click('button:has-text("Remove")');
    await expect(flashAfter(page, () => confirmDialog(page, 'Turn off'))).resolves.toEqual({
      kind: 'notice',
      text: 'Two-step verification is off',
    });
    await page.getByRole('button', { name: 'Set up an authenticator app' }).waitFor();
    await signOutInBrowser(page);
    await signInWithPassword(page);
    await page.waitForURL('**/workspaces');
  },
);
