// "Continue with <Provider>" in a real Chromium, against the stand-in OIDC provider on real HTTP:
// the buttons show for the configured providers only, a click goes to the provider, comes back
// through /auth/v1/callback and the app's /auth/confirm, and lands signed in; a refusal (an
// unverified e-mail for an existing account) lands on the sign-in page with a toast in the app's
// own words.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DESKTOP, seriousViolations, shoot, themedContext } from '../support/browser-checks.js';
import { newPage, signUpInBrowser, startBrowserSuite, type BrowserSuite } from '../support/browser-suite.js';
import { flashAfter } from '../support/flash.js';
import { startStandInProvider, type StandInProvider } from '../support/oidc-provider.js';

let suite: BrowserSuite;
let provider: StandInProvider;

beforeAll(async () => {
  provider = await startStandInProvider();
  suite = await startBrowserSuite(provider.env());
}, 300_000);
afterAll(async () => {
  await suite?.stop();
  await provider?.close();
});

const url = (path: string) => `${suite.app.url}${path}`;

test(
  'Continue with Google signs a new person in and lands on their workspaces',
  { timeout: 60_000 },
  async () => {
    provider.person = {
      sub: 'g-1001',
      email: 'grace@example.com',
      email_verified: true,
      name: 'Grace Hopper',
    };
    const page = await newPage(suite.browser);
    await page.goto(url('/sign-in'));
    const buttons = await page.getByRole('button', { name: /^Continue with/ }).allTextContents();
    expect(buttons.map((b) => b.trim())).toEqual(['Continue with Google', 'Continue with GitHub']);
    await page.getByRole('button', { name: 'Continue with Google' }).click();
    await page.waitForURL('**/workspaces');
    expect(provider.lastAuthorization?.get('redirect_uri')).toBe(url('/auth/v1/callback'));
    const { rows } = await suite.db.query<{ provider: string; provider_id: string }>(
      `select i.provider, i.provider_id from auth.identities i join auth.users u on u.id = i.user_id
     where u.email = 'grace@example.com'`,
    );
    expect(rows).toEqual([{ provider: 'google', provider_id: 'g-1001' }]);
    await page.context().close();
  },
);

test(
  'an unverified e-mail for an existing account comes back to sign-in as a toast',
  { timeout: 60_000 },
  async () => {
    await (await signUpInBrowser(suite, 'alan@example.com')).context().close();
    provider.person = { sub: 'gh-2002', email: 'alan@example.com', email_verified: false };
    const page = await newPage(suite.browser);
    await page.goto(url('/sign-up'));
    const shown = await flashAfter(page, () =>
      page.getByRole('button', { name: 'Continue with GitHub' }).click(),
    );
    expect(shown.kind).toBe('error');
    expect(shown.text).toContain('not verified with that provider');
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    const { rows } = await suite.db.query(
      `select 1 from auth.identities i join auth.users u on u.id = i.user_id
     where u.email = 'alan@example.com' and i.provider = 'github'`,
    );
    expect(rows).toHaveLength(0);
    await page.context().close();
  },
);

test('the sign-in and sign-up pages with provider buttons: accessible in both themes; screenshots', async () => {
  const problems: string[] = [];
  for (const theme of ['light', 'dark'] as const) {
    const context = await themedContext(suite.browser, { theme, size: DESKTOP, url: suite.app.url });
    const page = await context.newPage();
    for (const path of ['/sign-in', '/sign-up']) {
      await page.goto(url(path));
      await page.waitForLoadState('networkidle');
      for (const v of await seriousViolations(page)) problems.push(`${path} (${theme}): ${v.id} ${v.help}`);
      await shoot(page, `providers${path.replace('/', '-')}-${theme}-desktop`);
    }
    await context.close();
  }
  expect(problems).toEqual([]);
});
