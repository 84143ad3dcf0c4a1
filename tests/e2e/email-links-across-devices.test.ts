// E-mailed links where people really open them: on another device than the one that asked, or a
// second time. A used or expired link says so and leads to asking again; a reset link opened in
// another browser offers a fresh link for that browser, and the e-mail's code works wherever it is
// typed; an e-mail change confirmed from another browser says it took effect, the profile shows
// the address the account has now, and a pending change can be cancelled. With e-mail
// confirmation and secure e-mail change on (AUTH_AUTOCONFIRM=false), in a real browser.
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { AppProcess } from '../support/app-process.js';
import {
  inEveryLook,
  PHONE,
  seriousViolations,
  shoot,
  sidewaysOverflow,
  themedContext,
} from '../support/browser-checks.js';
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
  // Several e-mails to one address within a minute: the per-address frequency is off here.
  suite = await startBrowserSuite({ AUTH_AUTOCONFIRM: 'false', SMTP_MAX_FREQUENCY: '0' });
  ({ app, db } = suite);
}, 300_000);
afterAll(async () => suite?.stop());

const latestMail = (to: string) => latestAuthMail(db, to);

const signUpAndConfirm = (email: string, password?: string): Promise<Page> =>
  signUpAndConfirmInBrowser(suite, email, password);

async function askForReset(page: Page, email: string): Promise<void> {
  await page.goto(`${app.url}/forgot-password`);
  await page.fill('input[name=email]', email);
  await page.click('button[type=submit]');
  await page.waitForSelector('[data-sent]');
}

async function setNewPassword(page: Page, password: string): Promise<void> {
  await page.waitForURL('**/reset-password');
  await page.fill('input[name=password]', password);
  await page.click('button[type=submit]');
  await page.waitForURL('**/workspaces');
}

async function signsIn(email: string, password: string): Promise<boolean> {
  const res = await fetch(`${app.url}/auth/v1/token?grant_type=password`, {
    method: 'POST',
    headers: { apikey: app.env.PROJECT_API_KEY!, 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  await res.arrayBuffer();
  return res.status === 200;
}

test('a reset link used twice, or past its time, says so and leads back to asking for a new one', async () => {
  await signUpAndConfirm('twice@example.com');
  const laptop = await newPage(suite.browser);
  await askForReset(laptop, 'twice@example.com');
  const mail = await latestMail('twice@example.com');
  await laptop.goto(mail.link);
  await setNewPassword(laptop, 'the new password 1');

  const again = await newPage(suite.browser);
  await expect(flashAfter(again, () => again.goto(mail.link))).resolves.toEqual({
    kind: 'error',
    text: 'That reset link was already used or has expired; ask for a new one',
  });
  expect(new URL(again.url()).pathname).toBe('/forgot-password');

  // A sign-in link past its time: the same words, on the sign-in page.
  await signUpAndConfirm('late@example.com');
  const late = await newPage(suite.browser);
  await late.goto(`${app.url}/sign-in/email`);
  await late.fill('input[name=email]', 'late@example.com');
  await late.click('button[type=submit]');
  await late.waitForSelector('input[name=code]');
  const link = (await latestMail('late@example.com')).link;
  await db.query(
    `update auth.one_time_tokens set created_at = now() - interval '2 hours', expires_at = now() - interval '1 hour'
     where user_id = (select id from auth.users where email = $1)`,
    ['late@example.com'],
  );
  await expect(flashAfter(late, () => late.goto(link))).resolves.toEqual({
    kind: 'error',
    text: 'That link was already used or has expired; sign in, or ask for a new link',
  });
  expect(new URL(late.url()).pathname).toBe('/sign-in');
}, 120_000);

test('a reset asked for on a laptop and opened on a phone: a fresh link for the phone, and the code works on either', async () => {
  await signUpAndConfirm('phone@example.com', 'forgotten password 1');
  const laptop = await newPage(suite.browser);
  await askForReset(laptop, 'phone@example.com');
  const first = await latestMail('phone@example.com');

  // On the phone the link cannot sign in (it belongs to the laptop); the page names the address
  // and sends a fresh link and code on request.
  const phone = await themedContext(suite.browser, { theme: 'light', size: PHONE, url: app.url });
  const onPhone = await phone.newPage();
  await onPhone.goto(first.link);
  await onPhone.waitForURL('**/auth/other-browser?**');
  await expect(onPhone.textContent('main')).resolves.toContain('phone@example.com');
  expect(await signsIn('phone@example.com', 'forgotten password 1')).toBe(true);
  expect((await sidewaysOverflow(onPhone)).by).toBeLessThanOrEqual(0);
  await shoot(onPhone, 'link-other-browser-light-phone');
  await onPhone.getByRole('button', { name: 'Send a new link here' }).click();
  await onPhone.waitForSelector('[data-recovery-code]');
  const second = await latestMail('phone@example.com');
  expect(second.link).not.toBe(first.link);
  await shoot(onPhone, 'link-other-browser-sent-light-phone');

  // The fresh link works on the phone: a new password, signed in there.
  await onPhone.goto(second.link);
  await setNewPassword(onPhone, 'set on the phone 2');
  expect(await signsIn('phone@example.com', 'set on the phone 2')).toBe(true);
  await phone.close();

  // The other way round: asked on the laptop, the code read on the phone is typed on the laptop.
  await askForReset(laptop, 'phone@example.com');
  const third = await latestMail('phone@example.com');
  expect(third.code).toMatch(/^\d{6}$/);
  await laptop.fill('[data-recovery-code] input[name=code]', third.code === '000000' ? '111111' : '000000');
  await laptop.click('[data-recovery-code] button[type=submit]');
  expect(await fieldError(laptop, 'code')).toMatch(/expired|invalid/i);
  await laptop.fill('[data-recovery-code] input[name=code]', third.code!);
  await laptop.click('[data-recovery-code] button[type=submit]');
  await setNewPassword(laptop, 'set with the code 3');
  expect(await signsIn('phone@example.com', 'set with the code 3')).toBe(true);
}, 120_000);

test('an e-mail change confirmed from another browser says it took effect; the profile shows the new address; a change can be cancelled', async () => {
  const page = await signUpAndConfirm('change@example.com', 'password for change');
  await page.goto(`${app.url}/settings/profile`);
  await page.fill('input[name=email]', 'changed@example.com');
  await flashAfter(page, () => page.click('text=Change e-mail'));
  await expect(page.textContent('[data-pending-email]')).resolves.toContain('changed@example.com');

  // Both links opened in another browser: the first says to open the second, the second that the
  // address is now the new one (it changed, whichever browser opened it).
  const other = await newPage(suite.browser);
  const toOld = (await latestMail('change@example.com')).link;
  const toNewAddress = (await latestMail('changed@example.com')).link;
  await flashAfter(other, () => other.goto(toOld));
  await expect(flashAfter(other, () => other.goto(toNewAddress))).resolves.toEqual({
    kind: 'notice',
    text: 'Your e-mail address is now changed@example.com',
  });
  const users = await db.query('select email, email_change from auth.users where email like $1', ['change%']);
  expect(users.rows).toEqual([{ email: 'changed@example.com', email_change: null }]);

  // The first browser, still holding a token issued before the change, shows the truth.
  await page.goto(`${app.url}/settings/profile`);
  await expect(page.textContent('main')).resolves.toContain('You sign in with changed@example.com');
  expect(await page.locator('[data-pending-email]').count()).toBe(0);

  // A change asked for and then cancelled: its links no longer work, the address stays.
  await page.fill('input[name=email]', 'mistake@example.com');
  await flashAfter(page, () => page.click('text=Change e-mail'));
  const toNew = await latestMail('mistake@example.com');
  await expect(
    flashAfter(page, () => page.getByRole('button', { name: 'Cancel this change' }).click()),
  ).resolves.toEqual({ kind: 'notice', text: 'The e-mail change is cancelled; its links no longer work' });
  expect(await page.locator('[data-pending-email]').count()).toBe(0);
  const late = await newPage(suite.browser);
  await expect(flashAfter(late, () => late.goto(toNew.link))).resolves.toMatchObject({ kind: 'error' });
  const after = await db.query('select email, email_change from auth.users where email like $1', [
    'changed%',
  ]);
  expect(after.rows).toEqual([{ email: 'changed@example.com', email_change: null }]);
}, 120_000);

test('the pages of these flows: accessible in both themes, at desktop and phone width; screenshots', async () => {
  await signUpAndConfirm('looks@example.com');
  const problems: string[] = [];
  await inEveryLook(suite.browser, app.url, async (page, look) => {
    await askForReset(page, 'looks@example.com');
    for (const v of await seriousViolations(page)) problems.push(`sent (${look}): ${v.id}`);
    await shoot(page, `forgot-password-sent-${look}`);
    // Someone else's request (only the newest link works), opened here: the other-browser page.
    const asker = await newPage(suite.browser);
    await askForReset(asker, 'looks@example.com');
    await page.goto((await latestMail('looks@example.com')).link);
    await page.waitForURL('**/auth/other-browser?**');
    for (const v of await seriousViolations(page)) problems.push(`other browser (${look}): ${v.id}`);
    expect((await sidewaysOverflow(page)).by).toBeLessThanOrEqual(0);
    await shoot(page, `link-other-browser-${look}`);
    await asker.context().close();
  });
  expect(problems).toEqual([]);
}, 180_000);

test('a refused sign-up or password change keeps what was typed in the password fields; a changed password clears them', async () => {
  const page = await newPage(suite.browser);
  await page.goto(`${app.url}/sign-up`);
  await page.fill('input[name=email]', 'not an address');
  await page.fill('input[name=password]', 'a long enough password');
  // The server's answers to the form's posts, read through the browser's own requests.
  const answers: string[] = [];
  await page.route(`${app.url}/sign-up`, async (route) => {
    if (route.request().method() !== 'POST') return route.continue();
    const response = await route.fetch();
    answers.push(await response.text());
    await route.fulfill({ response });
  });
  await page.click('button[type=submit]');
  await fieldError(page, 'email');
  await expect(page.inputValue('input[name=password]')).resolves.toBe('a long enough password');
  // Kept in the browser only: the server's answer to the refused form has no password in it.
  expect(answers.join('')).toContain('Enter a valid e-mail address');
  expect(answers.join('')).not.toContain('a long enough password');

  const signedIn = await signUpAndConfirm('keeps@example.com', 'first password 1');
  await signedIn.goto(`${app.url}/settings/profile`);
  await signedIn.fill('input[name=current_password]', 'not my password');
  await signedIn.fill('input[name=password]', 'second password 2');
  await signedIn.click('text=Change password');
  expect(await fieldError(signedIn, 'current_password')).toBe('That is not your current password');
  await expect(signedIn.inputValue('input[name=current_password]')).resolves.toBe('not my password');
  await expect(signedIn.inputValue('input[name=password]')).resolves.toBe('second password 2');
  await signedIn.fill('input[name=current_password]', 'first password 1');
  await expect(flashAfter(signedIn, () => signedIn.click('text=Change password'))).resolves.toEqual({
    kind: 'notice',
    text: 'Password changed',
  });
  await expect(signedIn.inputValue('input[name=current_password]')).resolves.toBe('');
  await expect(signedIn.inputValue('input[name=password]')).resolves.toBe('');
}, 90_000);
