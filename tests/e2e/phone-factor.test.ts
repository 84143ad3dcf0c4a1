// A phone as the second step, in a real Chromium, with codes texted through Tenantry's Twilio
// provider to a local stand-in: adding it on the Security page (the number, a wrong code refused
// under the field, the right one turns it on and shows the recovery codes once), then signing in
// again with a code texted at the two-step page. Both pages are checked with axe-core and
// photographed in light and dark, at desktop and phone width.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { inEveryLook, seriousViolations, shoot, sidewaysOverflow } from '../support/browser-checks.js';
import {
  fieldError,
  signOutInBrowser,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';
import { startTwilioStandIn, twilioEnv, type TwilioStandIn } from '../support/twilio-stand-in.js';

let twilio: TwilioStandIn;
let suite: BrowserSuite;
let page: Page;
const EMAIL = 'pia@example.com';
const PHONE = '+447700900123';
const url = (path: string) => `${suite.app.url}${path}`;

beforeAll(async () => {
  twilio = await startTwilioStandIn();
  suite = await startBrowserSuite({ ...twilioEnv(twilio), MFA_PHONE_MAX_FREQUENCY: '1' });
  page = await signUpInBrowser(suite, EMAIL);
}, 300_000);
afterAll(async () => {
  await suite?.stop();
  await twilio?.close();
});

/** Every look of a page for whoever holds the browser's cookies: axe clean, no sideways scroll, photographed. */
async function checkEveryLook(path: string, name: string, ready: (p: Page) => Promise<void>) {
  const cookies = await page.context().cookies();
  await inEveryLook(suite.browser, suite.app.url, async (p, look) => {
    await p.context().addCookies(cookies.filter((c) => c.name !== 'tenantry-theme'));
    await p.goto(url(path));
    await ready(p);
    expect(await seriousViolations(p), `${name} ${look}`).toEqual([]);
    expect((await sidewaysOverflow(p)).by, `${name} ${look}`).toBe(0);
    await shoot(p, `${name}-${look}`);
  });
}

test(
  'adding a phone on the Security page: a wrong code is refused, the right one turns it on',
  { timeout: 120_000 },
  async () => {
    await checkEveryLook('/settings/security', 'security-phone', (p) =>
      p.getByRole('heading', { name: 'Or add a phone as a second step' }).waitFor(),
    );
    await page.goto(url('/settings/security'));
    await page.getByLabel('Mobile number').fill('+44 7700');
    await page.getByRole('button', { name: 'Text me a code' }).click();
    expect(await fieldError(page, 'phone')).toBe(
      'Enter the number with its country code, like +44 7700 900123',
    );

    await page.getByLabel('Mobile number').fill('+44 7700 900123');
    await page.getByRole('button', { name: 'Text me a code' }).click();
    await page.getByText('We texted a code to +447700900123.').waitFor();
    const code = twilio.to(PHONE).at(-1)!.code!;
    expect(code).toMatch(/^\d{6}$/);
    await shoot(page, 'security-phone-code-light-desktop');

    await page.getByLabel('Code from the text message').fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Turn on two-step verification' }).click();
    expect(await fieldError(page, 'code')).toBe(
      'That code is not right; check the text message and try again',
    );

    await page.getByLabel('Code from the text message').fill(code);
    await page.getByRole('button', { name: 'Turn on two-step verification' }).click();
    await page.locator('[data-recovery-codes]').waitFor();
    await page.goto(url('/settings/security'));
    await page.getByText(/^Phone,\s*added/).waitFor();
  },
);

test(
  'signing in again: the two-step page texts a code, which completes the sign-in',
  { timeout: 120_000 },
  async () => {
    await signOutInBrowser(page);
    await page.fill('input[name=email]', EMAIL);
    await page.fill('input[name=password]', 'correct horse battery');
    await page.click('button[type=submit]');
    await page.waitForURL('**/sign-in/two-step**');
    await checkEveryLook('/sign-in/two-step', 'two-step-phone', (p) =>
      p.getByRole('button', { name: 'Text me a code' }).waitFor(),
    );
    const before = twilio.to(PHONE).length;
    await page.getByRole('button', { name: 'Text me a code' }).click();
    await page.getByText('We texted a code to your phone ending in 23.').waitFor();
    expect(twilio.to(PHONE)).toHaveLength(before + 1);
    const code = twilio.to(PHONE).at(-1)!.code!;
    await page.getByLabel('Code from the text message').fill(code);
    await page.getByRole('button', { name: 'Continue' }).first().click();
    await page.waitForURL((u) => !u.pathname.startsWith('/sign-in'));
    const aal = await suite.db.query<{ aal: string }>(
      `select s.aal from auth.sessions s join auth.users u on u.id = s.user_id where u.email = $1
     order by s.created_at desc limit 1`,
      [EMAIL],
    );
    expect(aal.rows[0]!.aal).toBe('aal2');
  },
);

test('signing in with a phone: a code texted to the number signs in', { timeout: 120_000 }, async () => {
  // An account known by its phone, made and confirmed through the API as supabase-js would.
  const number = '+447700900456';
  const api = (path: string, body: unknown) =>
    fetch(url(`/auth/v1${path}`), {
      method: 'POST',
      headers: { apikey: suite.app.env.PROJECT_API_KEY!, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  expect((await api('/otp', { phone: number })).status).toBe(200);
  const confirmed = await api('/verify', {
    type: 'sms',
    phone: number,
    token: twilio.to(number).at(-1)!.code,
  });
  expect(confirmed.status).toBe(200);
  await suite.db.query('delete from internal.mail_frequency');

  await inEveryLook(suite.browser, suite.app.url, async (p, look) => {
    await p.goto(url('/sign-in/phone'));
    await p.getByLabel('Mobile number').waitFor();
    expect(await seriousViolations(p), look).toEqual([]);
    expect((await sidewaysOverflow(p)).by, look).toBe(0);
    await shoot(p, `phone-sign-in-${look}`);
  });

  const visitor = await suite.browser.newPage();
  await visitor.goto(url('/sign-in'));
  await visitor.getByRole('link', { name: 'Text me a code' }).click();
  await visitor.getByLabel('Mobile number').fill('+44 7700 900456');
  await visitor.getByRole('button', { name: 'Text me a sign-in code' }).click();
  await visitor.getByText('If an account uses +447700900456, we texted it a code.').waitFor();
  await visitor.getByLabel('Code from the text message').fill(twilio.to(number).at(-1)!.code!);
  await visitor.getByRole('button', { name: 'Sign in with code' }).click();
  await visitor.waitForURL('**/workspaces');
  await visitor.close();
});
