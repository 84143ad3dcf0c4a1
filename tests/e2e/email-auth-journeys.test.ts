// The e-mailed identity journeys in a real browser, with e-mail confirmation on
// (AUTH_AUTOCONFIRM=false): signing up means confirming the address from the e-mail's link, which
// signs in; a forgotten password is reset from an e-mailed link that lands on a page to set a new
// one; a sign-in link or 6-digit code replaces the password; none of them tells who has an account.
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { AppProcess } from '../support/app-process.js';
import {
  fieldError,
  latestAuthMail,
  newPage,
  signUpAndConfirmInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';
import { flashAfter } from '../support/flash.js';

let suite: BrowserSuite;
let app: AppProcess;
let db: pg.Client;

beforeAll(async () => {
  suite = await startBrowserSuite({ AUTH_AUTOCONFIRM: 'false' });
  ({ app, db } = suite);
}, 300_000);
afterAll(async () => suite?.stop());

const latestMail = (to: string) => latestAuthMail(db, to);

async function mailCount(to: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    'select count(*) as n from internal.outbox where to_address = $1',
    [to],
  );
  return Number(rows[0]!.n);
}

const signUpAndConfirm = (email: string, password?: string): Promise<Page> =>
  signUpAndConfirmInBrowser(suite, email, password);

test('sign-up asks to check the e-mail, offers a resend after a minute, and the link confirms and signs in', async () => {
  const page = await newPage(suite.browser);
  await page.goto(`${app.url}/sign-up`);
  await page.fill('input[name=email]', 'ada@example.com');
  await page.fill('input[name=password]', 'correct horse battery');
  await page.click('button[type=submit]');
  const shown = await page.waitForSelector('[data-check-email]');
  expect(await shown.textContent()).toContain('Check your e-mail');
  expect(await shown.textContent()).toContain('ada@example.com');
  // The resend waits for the identity service's minute between two e-mails.
  await expect(page.getByRole('button', { name: /Send again in \d+ s/ }).isDisabled()).resolves.toBe(true);

  const before = await db.query('select email_confirmed_at from auth.users where email = $1', [
    'ada@example.com',
  ]);
  expect(before.rows[0].email_confirmed_at).toBeNull();
  const mail = await latestMail('ada@example.com');
  expect(mail.kind).toBe('auth.confirmation');
  await page.goto(mail.link);
  await page.waitForURL('**/workspaces');
  const after = await db.query('select email_confirmed_at from auth.users where email = $1', [
    'ada@example.com',
  ]);
  expect(after.rows[0].email_confirmed_at).not.toBeNull();

  // The link is single-use: followed again, it says so, in the app's words, and signs nobody in.
  const other = await newPage(suite.browser);
  await expect(flashAfter(other, () => other.goto(mail.link))).resolves.toMatchObject({ kind: 'error' });
  expect(new URL(other.url()).pathname).toBe('/sign-in');
}, 90_000);

test('forgot password: the same answer for any address, and the link leads to a new password, signed in', async () => {
  await signUpAndConfirm('grace@example.com', 'old password here');

  const page = await newPage(suite.browser);
  await page.goto(`${app.url}/sign-in`);
  await page.click('text=Forgot password?');
  await page.waitForURL('**/forgot-password');
  // An unknown address gets the same answer and no e-mail.
  await page.fill('input[name=email]', 'nobody@example.com');
  await page.click('button[type=submit]');
  const unknown = ((await (await page.waitForSelector('[data-sent]')).textContent()) ?? '').replace(
    'nobody@example.com',
    'X',
  );
  expect(unknown).toContain('If an account exists');
  expect(await mailCount('nobody@example.com')).toBe(0);

  await page.goto(`${app.url}/forgot-password`);
  await page.fill('input[name=email]', 'grace@example.com');
  await page.click('button[type=submit]');
  const known = ((await (await page.waitForSelector('[data-sent]')).textContent()) ?? '').replace(
    'grace@example.com',
    'X',
  );
  expect(known).toBe(unknown);

  const mail = await latestMail('grace@example.com');
  expect(mail.kind).toBe('auth.recovery');
  await page.goto(mail.link);
  await page.waitForURL('**/reset-password');
  await page.fill('input[name=password]', 'short');
  await page.click('button[type=submit]');
  expect(await fieldError(page, 'password')).toMatch(/characters/);
  await page.fill('input[name=password]', 'brand new password');
  await expect(flashAfter(page, () => page.click('button[type=submit]'))).resolves.toEqual({
    kind: 'notice',
    text: 'Password set; you are signed in',
  });
  await page.waitForURL('**/workspaces');

  // The new password signs in; the old one no longer does.
  const fresh = await newPage(suite.browser);
  await fresh.goto(`${app.url}/sign-in`);
  await fresh.fill('input[name=email]', 'grace@example.com');
  await fresh.fill('input[name=password]', 'brand new password');
  await fresh.click('button[type=submit]');
  await fresh.waitForURL('**/workspaces');
}, 90_000);

async function askForSignInEmail(page: Page, email: string): Promise<string> {
  await page.goto(`${app.url}/sign-in`);
  await page.click('text=E-mail me a sign-in link or code');
  await page.waitForURL('**/sign-in/email');
  await page.fill('input[name=email]', email);
  await page.click('button[type=submit]');
  await page.waitForSelector('input[name=code]');
  return ((await page.textContent('[role=status]')) ?? '').replace(email, 'X');
}

test('sign-in by e-mail: a 6-digit code or the link signs in; unknown addresses get the same answer and no account', async () => {
  await signUpAndConfirm('alan@example.com');
  await signUpAndConfirm('edsger@example.com');

  const page = await newPage(suite.browser);
  const known = await askForSignInEmail(page, 'alan@example.com');
  const mail = await latestMail('alan@example.com');
  expect(mail.kind).toBe('auth.magic_link');
  expect(mail.code).toMatch(/^\d{6}$/);
  const wrong = mail.code === '000000' ? '111111' : '000000';
  await page.fill('input[name=code]', wrong);
  await page.click('button[type=submit]');
  expect(await fieldError(page, 'code')).toMatch(/expired|invalid/i);
  await page.fill('input[name=code]', mail.code!);
  await page.click('button[type=submit]');
  await page.waitForURL('**/workspaces');

  // The link, followed in the browser that asked for it, signs in too.
  const byLink = await newPage(suite.browser);
  await askForSignInEmail(byLink, 'edsger@example.com');
  await byLink.goto((await latestMail('edsger@example.com')).link);
  await byLink.waitForURL('**/workspaces');

  const stranger = await newPage(suite.browser);
  expect(await askForSignInEmail(stranger, 'nobody-here@example.com')).toBe(known);
  expect(await mailCount('nobody-here@example.com')).toBe(0);
  const created = await db.query('select 1 from auth.users where email = $1', ['nobody-here@example.com']);
  expect(created.rowCount).toBe(0);
}, 90_000);

test('profile: a new e-mail address takes effect only once both addresses confirm; a new password needs the current one', async () => {
  const page = await signUpAndConfirm('barbara@example.com', 'first password 1');
  await page.goto(`${app.url}/settings/profile`);

  // The password: the current one is asked for, and a wrong one changes nothing.
  await page.fill('input[name=current_password]', 'not my password');
  await page.fill('input[name=password]', 'second password 2');
  await page.click('text=Change password');
  expect(await fieldError(page, 'current_password')).toBe('That is not your current password');
  await page.fill('input[name=current_password]', 'first password 1');
  await page.fill('input[name=password]', 'second password 2');
  await expect(flashAfter(page, () => page.click('text=Change password'))).resolves.toEqual({
    kind: 'notice',
    text: 'Password changed',
  });

  // The e-mail address: confirmation links go to both addresses; the old one stays until then.
  await page.fill('input[name=email]', 'barbara.liskov@example.com');
  const sent = await flashAfter(page, () => page.click('text=Change e-mail'));
  expect(sent.text).toContain('barbara@example.com');
  expect(sent.text).toContain('barbara.liskov@example.com');
  await expect(page.textContent('[data-pending-email]')).resolves.toContain('barbara.liskov@example.com');
  const users = () => db.query('select email from auth.users where email like $1', ['barbara%']);
  expect((await users()).rows).toEqual([{ email: 'barbara@example.com' }]);

  const toOld = await latestMail('barbara@example.com');
  const toNew = await latestMail('barbara.liskov@example.com');
  await expect(flashAfter(page, () => page.goto(toOld.link))).resolves.toEqual({
    kind: 'notice',
    text: 'Confirmed; now open the link sent to your other address',
  });
  expect((await users()).rows).toEqual([{ email: 'barbara@example.com' }]);
  await page.goto(toNew.link);
  await page.waitForURL('**/settings/profile');
  expect((await users()).rows).toEqual([{ email: 'barbara.liskov@example.com' }]);
  await expect(page.textContent('main')).resolves.toContain('You sign in with barbara.liskov@example.com');

  // The new address and the new password sign in.
  const fresh = await newPage(suite.browser);
  await fresh.goto(`${app.url}/sign-in`);
  await fresh.fill('input[name=email]', 'barbara.liskov@example.com');
  await fresh.fill('input[name=password]', 'second password 2');
  await fresh.click('button[type=submit]');
  await fresh.waitForURL('**/workspaces');
}, 90_000);

test('an invitation to someone without an account: sign up, confirm from the e-mail, and land back on the invitation', async () => {
  const owner = await signUpAndConfirm('owner@example.com');
  await owner.fill('#new-workspace input[name=name]', 'Lovelace Labs');
  await owner.click('text=Create workspace');
  await owner.waitForURL((url) => url.pathname.startsWith('/w/'));
  const slug = new URL(owner.url()).pathname.split('/')[2]!;
  await owner.goto(`${app.url}/w/${slug}/members`);
  await owner.fill('input[name=email]', 'hopper@example.com');
  await flashAfter(owner, () => owner.click('text=Send invitation'));
  const invitation = await db.query<{ text_body: string }>(
    `select text_body from internal.outbox where kind = 'invitation' and to_address = 'hopper@example.com'`,
  );
  const link = /(https?:\/\/\S+\/invitations\/accept\?token=\w+)/.exec(invitation.rows[0]!.text_body)![1]!;

  const invitee = await newPage(suite.browser);
  await invitee.goto(link);
  await invitee.getByRole('link', { name: 'Create an account' }).click();
  await invitee.fill('input[name=password]', 'correct horse battery');
  await invitee.click('button[type=submit]');
  await invitee.waitForSelector('[data-check-email]');
  await invitee.goto((await latestMail('hopper@example.com')).link);
  await invitee.waitForURL('**/invitations/accept?token=*');
  await expect(flashAfter(invitee, () => invitee.click('text=Accept invitation'))).resolves.toEqual({
    kind: 'notice',
    text: 'Welcome to the workspace',
  });
  await invitee.waitForURL(`**/w/${slug}`);
}, 90_000);
