// The web app as a paying customer meets it, in a real Chromium: every submit shows it is running
// and a double click creates one record; refusals come back in the form with the input kept;
// destructive actions ask first; people see only the controls they may use; the workspace
// switcher works from the keyboard; the theme follows the system or the person's choice without
// a flash; a phone never scrolls sideways; and axe-core finds no serious or critical
// accessibility problem on any page, in either theme. Screenshots of every page in light and
// dark, desktop and phone, go to test-results/screenshots/pages/.
import { Secret, TOTP } from 'otpauth';
import type { Cookie, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import {
  DESKTOP,
  PHONE,
  seriousViolations,
  shoot,
  sidewaysOverflow,
  themedContext,
} from '../support/browser-checks.js';
import {
  createWorkspaceInBrowser,
  confirmDialog,
  fieldError,
  newPage,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';
import { flashAfter } from '../support/flash.js';
import { startStandInProvider, type StandInProvider } from '../support/oidc-provider.js';

let suite: BrowserSuite;
// Configured so the sign-in and sign-up pages show their "Continue with …" buttons.
let provider: StandInProvider;
let owner: Page;
let slug: string;
let invitationLink: string;
/** the cookies of a session that still owes its second step (two-step verification is set up) */
let halfwayCookies: Cookie[];

const url = (path: string) => `${suite.app.url}${path}`;
const count = async (sql: string, values: unknown[] = []) =>
  Number((await suite.db.query<{ n: string }>(`select count(*) as n from (${sql}) x`, values)).rows[0]!.n);

/** Adds an existing account to the workspace at a role (as the database would after an invitation). */
async function addMember(email: string, role: string) {
  await suite.db.query(
    `insert into public.workspace_members (workspace_id, user_id, role)
     select w.id, p.id, $3 from public.workspaces w, public.profiles p where w.slug = $1 and p.email = $2`,
    [slug, email, role],
  );
}

beforeAll(async () => {
  provider = await startStandInProvider();
  suite = await startBrowserSuite({ BILLING_PLANS: '[]', ...provider.env() });
  owner = await signUpInBrowser(suite, 'ada@example.com');
  await owner.goto(url('/settings/profile'));
  await owner.fill('input[name=display_name]', 'Ada Lovelace');
  await flashAfter(owner, () => owner.click('text=Save profile'));
  slug = await createWorkspaceInBrowser(suite, owner, 'Lovelace Labs');
  for (const name of ['Analytical Engine', 'Difference Engine']) {
    await owner.fill('input[name=name]', name);
    await flashAfter(owner, () => owner.click('text=Add project'));
  }
  for (const [email, role] of [
    ['grace@example.com', 'admin'],
    ['alan@example.com', 'member'],
    ['edsger@example.com', 'viewer'],
  ] as const) {
    await (await signUpInBrowser(suite, email)).context().close();
    await addMember(email, role);
  }
  await owner.goto(url(`/w/${slug}/members`));
  await owner.fill('input[name=email]', 'barbara@example.com');
  await flashAfter(owner, () => owner.click('text=Send invitation'));
  const mail = await suite.db.query<{ text_body: string }>(
    `select text_body from internal.outbox where to_address = 'barbara@example.com' order by id desc limit 1`,
  );
  invitationLink = /(https?:\/\/\S+\/invitations\/accept\?token=\w+)/.exec(mail.rows[0]!.text_body)![1]!;

  // A workspace of Ada's that requires two-step verification, which she has not set up.
  await suite.db.query(
    `with w as (insert into public.workspaces (name, slug, require_mfa) values ('Locked Labs', 'locked-labs', true)
                returning id)
     insert into public.workspace_members (workspace_id, user_id, role)
     select w.id, p.id, 'member' from w, public.profiles p where p.email = 'ada@example.com'`,
  );
  // Ida set up an authenticator app, then signed in again with her password only.
  const ida = await signUpInBrowser(suite, 'ida@example.com');
  await ida.goto(url('/settings/security'));
  await ida.click('text=Set up an authenticator app');
  const secret = ((await ida.textContent('[data-totp-secret]')) ?? '').trim();
  const totp = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' });
  await ida.fill('input[name=code]', totp.generate());
  await ida.click('text=Turn on two-step verification');
  await ida.waitForSelector('[data-recovery-codes]');
  await ida.context().clearCookies();
  await ida.goto(url('/sign-in'));
  await ida.fill('input[name=email]', 'ida@example.com');
  await ida.fill('input[name=password]', 'correct horse battery');
  await ida.click('button[type=submit]');
  await ida.waitForURL('**/sign-in/two-step**');
  halfwayCookies = await ida.context().cookies();
  await ida.context().close();
}, 300_000);
afterAll(async () => {
  await suite?.stop();
  await provider?.close();
});

test(
  'a double click creates one record, and the button shows it is working',
  { timeout: 60_000 },
  async () => {
    await owner.goto(url(`/w/${slug}`));
    await owner.fill('input[name=name]', 'Jacquard Loom');
    await flashAfter(owner, () => owner.dblclick('button:has-text("Add project")'));
    await owner.waitForSelector('ul[aria-label=Projects] >> text=Jacquard Loom');
    expect(await count(`select 1 from public.projects where name = 'Jacquard Loom'`)).toBe(1);

    await owner.goto(url('/workspaces'));
    await owner.fill('#new-workspace input[name=name]', 'Twice Clicked');
    await owner.dblclick('button:has-text("Create workspace")');
    await owner.waitForURL('**/w/twice-clicked');
    expect(await count(`select 1 from public.workspaces where name = 'Twice Clicked'`)).toBe(1);
  },
);

test(
  'under a slow network the pending state is visible: disabled, spinner, verb',
  { timeout: 60_000 },
  async () => {
    const page = await newPage(suite.browser);
    await page.context().addCookies(await owner.context().cookies());
    await page.goto(url(`/w/${slug}`));
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 1500,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    await page.fill('input[name=name]', 'Slow Project');
    await page.click('button:has-text("Add project")');
    const pending = page.locator('button[data-pending=true]');
    await pending.waitFor();
    await expect(pending.textContent()).resolves.toBe('Adding…');
    await expect(pending.isDisabled()).resolves.toBe(true);
    expect(await pending.locator('svg.animate-spin').count()).toBe(1);
    await page.screenshot({ path: 'test-results/screenshots/pending-state.png' });
    // A second click while it runs does nothing.
    await pending.click({ force: true });
    await page.waitForSelector('[data-flash=notice]', { timeout: 20_000 });
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    expect(await count(`select 1 from public.projects where name = 'Slow Project'`)).toBe(1);
    await page.context().close();
  },
);

test('a refused form keeps what was typed and says what to fix, under the field', async () => {
  await owner.goto(url(`/w/${slug}/members`));
  await owner.fill('input[name=email]', 'not an address');
  await owner.click('text=Send invitation');
  await expect(fieldError(owner, 'email')).resolves.toBe(
    'Enter a valid e-mail address, like ada@example.com',
  );
  expect(await owner.inputValue('input[name=email]')).toBe('not an address');
  await shoot(owner, 'members-invite-error-light-desktop');

  await owner.goto(url(`/w/${slug}`));
  await owner.fill('input[name=name]', '   ');
  await owner.click('text=Add project');
  await expect(owner.textContent('#new-project-error')).resolves.toBe('Give the project a name');
  // Never the validation library's own wording.
  await expect(owner.innerText('body')).resolves.not.toMatch(/Too small|expected string/);
});

test('each destructive action asks first; Cancel changes nothing', { timeout: 90_000 }, async () => {
  const projects = `select 1 from public.projects p join public.workspaces w on w.id = p.workspace_id where w.slug = '${slug}'`;
  const before = await count(projects);
  await owner.goto(url(`/w/${slug}`));
  await owner.click('[aria-label="Actions for Analytical Engine"]');
  await owner.getByRole('menuitem', { name: 'Delete' }).click();
  const dialog = owner.getByRole('alertdialog');
  await expect(dialog.textContent()).resolves.toContain('Delete Analytical Engine?');
  await shoot(owner, 'confirm-delete-project-light-desktop', { fullPage: false });
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  expect(await count(projects)).toBe(before);

  await owner.goto(url(`/w/${slug}/members`));
  for (const [trigger, question] of [
    ['[aria-label="Remove alan@example.com"]', 'Remove alan@example.com?'],
    ['[aria-label="Revoke the invitation for barbara@example.com"]', 'Revoke this invitation?'],
  ]) {
    await owner.click(trigger!);
    await expect(owner.getByRole('alertdialog').textContent()).resolves.toContain(question);
    await owner.keyboard.press('Escape');
  }
  expect(
    await count(
      `select 1 from public.workspace_members m join public.profiles p on p.id = m.user_id where p.email = 'alan@example.com'`,
    ),
  ).toBe(1);
  expect(
    await count(
      `select 1 from public.invitations where email = 'barbara@example.com' and revoked_at is null`,
    ),
  ).toBe(1);

  const alan = await newPage(suite.browser);
  await alan.goto(url('/sign-in'));
  await alan.fill('input[name=email]', 'alan@example.com');
  await alan.fill('input[name=password]', 'correct horse battery');
  await alan.click('button[type=submit]');
  await alan.waitForURL('**/workspaces');
  await alan.goto(url(`/w/${slug}/members`));
  await alan.click('text=Leave this workspace');
  await expect(alan.getByRole('alertdialog').textContent()).resolves.toContain('Leave Lovelace Labs?');
  await alan.getByRole('alertdialog').getByRole('button', { name: 'Cancel' }).click();
  expect(
    await count(
      `select 1 from public.workspace_members m join public.profiles p on p.id = m.user_id where p.email = 'alan@example.com'`,
    ),
  ).toBe(1);
  await alan.context().close();

  await owner.goto(url(`/w/${slug}/settings`));
  await owner.click('text=Delete workspace');
  await expect(owner.getByRole('dialog').textContent()).resolves.toContain(`Type ${slug} to confirm`);
  await owner.keyboard.press('Escape');
  expect(await count(`select 1 from public.workspaces where slug = $1`, [slug])).toBe(1);
});

async function signedInAs(email: string, size = DESKTOP): Promise<Page> {
  const context = await suite.browser.newContext({ viewport: size });
  context.setDefaultTimeout(15_000);
  const page = await context.newPage();
  await page.goto(url('/sign-in'));
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', 'correct horse battery');
  await page.click('button[type=submit]');
  await page.waitForURL('**/workspaces');
  return page;
}

test('admins and members see only the controls they may use', { timeout: 90_000 }, async () => {
  const roleMenus = (page: Page) =>
    page.$$eval('[aria-label^="Role of "]', (els) =>
      els.map((e) => e.getAttribute('aria-label')!.split(':')[0]!.slice(8)),
    );
  const removable = (page: Page) =>
    page.$$eval('[aria-label^="Remove "]', (els) => els.map((e) => e.getAttribute('aria-label')!.slice(7)));

  // The owner (the only one): everyone else's role and removal, not their own; cannot leave.
  await owner.goto(url(`/w/${slug}/members`));
  expect((await roleMenus(owner)).sort()).toEqual([
    'alan@example.com',
    'edsger@example.com',
    'grace@example.com',
  ]);
  expect(await owner.locator('text=Leave this workspace').count()).toBe(0);
  await expect(owner.textContent('[data-member="ada@example.com"]')).resolves.toContain('you');
  await owner.click('[aria-label^="Role of alan@example.com"]');
  await expect(owner.getByRole('menuitem').allTextContents()).resolves.toHaveLength(4);
  await owner.keyboard.press('Escape');

  // An admin: members and viewers, roles up to admin; nothing on the owner or themselves.
  const grace = await signedInAs('grace@example.com');
  await grace.goto(url(`/w/${slug}/members`));
  expect((await roleMenus(grace)).sort()).toEqual(['alan@example.com', 'edsger@example.com']);
  expect((await removable(grace)).sort()).toEqual(['alan@example.com', 'edsger@example.com']);
  await grace.click('[aria-label^="Role of alan@example.com"]');
  const offered = await grace.getByRole('menuitem').allTextContents();
  expect(offered.map((t) => t.split(/[A-Z]/)[0]!.replace(' (current role)', ''))).toEqual([
    'viewer',
    'member',
    'admin',
  ]);
  // The current role is said to screen readers, not only shown as a tick.
  expect(offered.filter((t) => t.includes('(current role)'))).toHaveLength(1);
  await grace.keyboard.press('Escape');
  expect(
    await grace.$$eval('select[name=role] option', (o) => o.map((x) => (x as HTMLOptionElement).value)),
  ).toEqual(['viewer', 'member', 'admin']);
  await shoot(grace, 'members-as-admin-light-desktop');

  // A member: no role menus, no removal, no invitations.
  const alan = await signedInAs('alan@example.com');
  await alan.goto(url(`/w/${slug}/members`));
  expect(await roleMenus(alan)).toEqual([]);
  expect(await removable(alan)).toEqual([]);
  expect(await alan.locator('text=Send invitation').count()).toBe(0);
  expect(await alan.locator('text=Pending invitations').count()).toBe(0);
  // The settings are shown, not offered.
  await alan.goto(url(`/w/${slug}/settings`));
  expect(await alan.locator('input[name=new_slug]').count()).toBe(0);
  expect(await alan.locator('text=Delete workspace').count()).toBe(0);
  await shoot(alan, 'members-as-member-light-desktop');
  // Billing without payments set up: a member and the owner see the plan and a neutral notice,
  // nothing of the operator's set-up.
  await alan.goto(url(`/w/${slug}/billing`));
  await expect(alan.getAttribute('[data-plan]', 'data-plan')).resolves.toBe('free');
  await expect(alan.innerText('main')).resolves.not.toMatch(/not configured|STRIPE|Set up payments/i);
  await owner.goto(url(`/w/${slug}/billing`));
  await expect(owner.innerText('main')).resolves.toContain('Paid plans are not available here yet');
  await expect(owner.innerText('main')).resolves.not.toMatch(/STRIPE|BILLING_PLANS|webhook|Set up payments/i);
  await grace.context().close();
  await alan.context().close();
});

test(
  'activity is told in sentences, and a removed member is still named in it',
  { timeout: 60_000 },
  async () => {
    const grace = await signedInAs('grace@example.com');
    await grace.goto(url(`/w/${slug}`));
    await grace.fill('input[name=name]', 'Compiler');
    await flashAfter(grace, () => grace.click('text=Add project'));
    await grace.context().close();

    await owner.goto(url(`/w/${slug}/members`));
    await owner.click('[aria-label^="Role of edsger@example.com"]');
    await flashAfter(owner, () => owner.getByRole('menuitem', { name: /^member/i }).click());
    await owner.click('[aria-label="Remove grace@example.com"]');
    await flashAfter(owner, () => confirmDialog(owner, 'Remove member'));
    await owner.goto(url(`/w/${slug}`));
    const feed = await owner.locator('ol[aria-label=Activity] li p').allInnerTexts();
    const lines = feed.map((l) => l.split('\n')[0]!.trim());
    expect(lines).toContain('You removed grace@example.com from the workspace');
    expect(lines).toContain('grace@example.com created the project Compiler');
    expect(lines).toContain('You changed edsger@example.com’s role from viewer to member');
    expect(lines.join('\n')).not.toMatch(/role_changed|member\.|project\./);
    // Relative times carry the exact time, in the viewer's time zone, on hover.
    await expect(owner.getAttribute('ol[aria-label=Activity] time', 'title')).resolves.toMatch(
      /\d{4}|\d:\d\d/,
    );
  },
);

test('the workspace switcher works from the keyboard', { timeout: 60_000 }, async () => {
  await owner.goto(url(`/w/${slug}`));
  // A keyboard user's pointer is not resting over the menu: where earlier tests left it, the
  // menu would open under it and the item beneath it would take focus back from type-ahead.
  await owner.mouse.move(0, 0);
  const trigger = owner.locator('[data-workspace-switcher]');
  await trigger.focus();
  await owner.keyboard.press('Enter');
  const menu = owner.getByRole('menu');
  await menu.waitFor();
  // Keys typed before the opened menu holds focus would go to the trigger, as with a person.
  await owner.waitForFunction(() => document.activeElement?.closest('[role=menu]') != null);
  await shoot(owner, 'workspace-switcher-light-desktop', { fullPage: false });
  // Type-ahead to the other workspace, then Enter.
  await owner.keyboard.type('Twice');
  await expect
    .poll(() => owner.evaluate(() => document.activeElement?.textContent ?? ''))
    .toContain('Twice Clicked');
  await owner.keyboard.press('Enter');
  await owner.waitForURL('**/w/twice-clicked');
  await expect(owner.textContent('[data-current-workspace]')).resolves.toBe('Twice Clicked');
  await expect(owner.getAttribute('nav[aria-label=Workspace] a[aria-current=page]', 'href')).resolves.toBe(
    '/w/twice-clicked',
  );
  await owner.goto(url(`/w/${slug}/members`));
  await expect(owner.textContent('nav[aria-label=Workspace] a[aria-current=page]')).resolves.toBe('Members');
  await expect.poll(() => owner.title()).toBe('Members · Lovelace Labs · Tenantry');
});

test('keyboard: the first Tab reaches a visible skip link that moves focus to the page', async () => {
  await owner.goto(url(`/w/${slug}/members`));
  await owner.keyboard.press('Tab');
  const focused = await owner.evaluate(() => {
    const e = document.activeElement as HTMLElement;
    const box = e.getBoundingClientRect();
    return {
      text: e.textContent,
      visible: box.width > 1 && box.height > 1,
      outline: getComputedStyle(e).outlineStyle,
    };
  });
  expect(focused).toEqual({ text: 'Skip to content', visible: true, outline: 'solid' });
  await owner.keyboard.press('Enter');
  await expect(owner.evaluate(() => document.activeElement?.id)).resolves.toBe('main');
});

test('dark mode: follows the system, or the choice in the account menu, from the first paint', async () => {
  const background = (page: Page) => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const context = await suite.browser.newContext({ colorScheme: 'dark', viewport: DESKTOP });
  await context.addCookies(await owner.context().cookies());
  const page = await context.newPage();
  await page.goto(url('/workspaces'));
  expect(await background(page)).toBe('rgb(9, 9, 11)');
  // Pick Light: applied at once, and the server renders it next time (no flash of the other).
  await page.click('[data-account-menu]');
  await page.getByRole('menuitemradio', { name: 'Light' }).click();
  await page.keyboard.press('Escape');
  expect(await background(page)).toBe('rgb(250, 250, 250)');
  const html = await (await context.request.get(url('/workspaces'))).text();
  expect(html).toMatch(/<html lang="en" data-theme="light"/);
  await page.click('[data-account-menu]');
  await page.getByRole('menuitemradio', { name: 'Dark' }).click();
  await page.keyboard.press('Escape');
  await page.reload();
  expect(await page.getAttribute('html', 'data-theme')).toBe('dark');
  expect(await background(page)).toBe('rgb(9, 9, 11)');
  await context.close();
});

test('signed-in visitors to the start and sign-in pages go to their workspaces; bad addresses are a friendly 404', async () => {
  for (const path of ['/', '/sign-in', '/sign-up']) {
    await owner.goto(url(path));
    expect(new URL(owner.url()).pathname, path).toBe('/workspaces');
  }
  for (const path of ['/w/no-such-workspace', '/w/UPPER', '/no-such-page', '/w/%ZZ', '/w/%ZZ/members']) {
    const res = await owner.goto(url(path));
    expect(res!.status(), path).toBe(404);
    await expect(owner.textContent('h1'), path).resolves.toBe('Page not found');
    // Signed in, the app's own header stays: the account menu and the workspace switcher.
    expect(await owner.locator('[data-account-menu]').count(), path).toBe(1);
  }
  // A visitor gets the plain page.
  const visitor = await suite.browser.newPage();
  const res = await visitor.goto(url('/no-such-page'));
  expect(res!.status()).toBe(404);
  expect(await visitor.locator('[data-account-menu]').count()).toBe(0);
  await visitor.close();
});

/** Every page, as who sees it. */
function pages(): { name: string; path: string; as: 'owner' | 'visitor' | 'halfway' }[] {
  return [
    { name: 'landing', path: '/', as: 'visitor' },
    { name: 'sign-in', path: '/sign-in', as: 'visitor' },
    { name: 'sign-up', path: '/sign-up', as: 'visitor' },
    { name: 'forgot-password', path: '/forgot-password', as: 'visitor' },
    { name: 'sign-in-by-email', path: '/sign-in/email', as: 'visitor' },
    { name: 'reset-password-signed-out', path: '/reset-password', as: 'visitor' },
    { name: 'invitation-signed-out', path: invitationLink.replace(suite.app.url, ''), as: 'visitor' },
    { name: 'invitation-invalid', path: '/invitations/accept?token=nothing', as: 'visitor' },
    { name: 'not-found', path: '/w/nothing-here', as: 'owner' },
    { name: 'workspaces', path: '/workspaces', as: 'owner' },
    { name: 'workspace-overview', path: `/w/${slug}`, as: 'owner' },
    { name: 'members', path: `/w/${slug}/members`, as: 'owner' },
    { name: 'settings', path: `/w/${slug}/settings`, as: 'owner' },
    { name: 'billing', path: `/w/${slug}/billing`, as: 'owner' },
    { name: 'audit-log', path: `/w/${slug}/audit`, as: 'owner' },
    { name: 'profile', path: '/settings/profile', as: 'owner' },
    { name: 'notifications', path: '/settings/notifications', as: 'owner' },
    { name: 'security', path: '/settings/security', as: 'owner' },
    { name: 'two-step-required', path: '/two-step-required/locked-labs', as: 'owner' },
    { name: 'sign-in-two-step', path: '/sign-in/two-step', as: 'halfway' },
    { name: 'invitation-wrong-account', path: invitationLink.replace(suite.app.url, ''), as: 'owner' },
  ];
}

test(
  'every page: no serious accessibility problem, no sideways scroll on a phone; screenshots',
  { timeout: 300_000 },
  async () => {
    const ownerCookies = await owner.context().cookies();
    const problems: string[] = [];
    for (const theme of ['light', 'dark'] as const) {
      for (const [device, size] of [
        ['desktop', DESKTOP],
        ['phone', PHONE],
      ] as const) {
        const context = await themedContext(suite.browser, { theme, size, url: suite.app.url });
        const visitor = await context.newPage();
        const ownerContext = await themedContext(suite.browser, { theme, size, url: suite.app.url });
        await ownerContext.addCookies(ownerCookies);
        const signedIn = await ownerContext.newPage();
        const halfwayContext = await themedContext(suite.browser, { theme, size, url: suite.app.url });
        await halfwayContext.addCookies(halfwayCookies);
        const halfway = await halfwayContext.newPage();
        for (const p of pages()) {
          const page = p.as === 'owner' ? signedIn : p.as === 'halfway' ? halfway : visitor;
          await page.goto(url(p.path));
          await page.waitForLoadState('networkidle');
          if (device === 'desktop') {
            for (const v of await seriousViolations(page))
              problems.push(`${p.name} (${theme}): ${v.id} ${v.help} at ${v.targets.slice(0, 3).join(', ')}`);
          } else {
            const overflow = await sidewaysOverflow(page);
            if (overflow.by > 0)
              problems.push(
                `${p.name} (${theme}, phone): scrolls ${overflow.by}px sideways: ${overflow.widest}`,
              );
          }
          await shoot(page, `${p.name}-${theme}-${device}`);
        }
        if (device === 'phone') {
          // The collapsed navigation opens, and its targets are big enough to tap.
          await signedIn.goto(url(`/w/${slug}`));
          await signedIn.click('[aria-label="Open navigation"]');
          const dialog = signedIn.getByRole('dialog');
          await dialog.waitFor();
          const heights = await dialog
            .locator('a, button')
            .evaluateAll((els) =>
              els.map((e) => [e.textContent?.trim() ?? '', e.getBoundingClientRect().height] as const),
            );
          for (const [label, height] of heights)
            if (height < 44) problems.push(`phone navigation: "${label}" is ${height}px tall`);
          for (const v of await seriousViolations(signedIn))
            problems.push(`phone navigation (${theme}): ${v.id} ${v.help}`);
          await shoot(signedIn, `navigation-${theme}-phone`, { fullPage: false });
          await signedIn.keyboard.press('Escape');
          await signedIn.goto(url(`/w/${slug}`));
          const primary = await signedIn.locator('button:has-text("Add project")').boundingBox();
          if (!primary || primary.height < 44)
            problems.push(`Add project is ${primary?.height}px tall on a phone`);
        }
        await context.close();
        await ownerContext.close();
        await halfwayContext.close();
      }
    }
    expect(problems).toEqual([]);
  },
);

test('every page names its icons: the mark as an SVG favicon and a 180 px touch icon, both served', async () => {
  const html = await (await fetch(url('/sign-in'))).text();
  const link = (rel: string) => {
    const tag = new RegExp(`<link[^>]*rel="${rel}"[^>]*>`).exec(html)?.[0];
    return tag ? /href="([^"]+)"/.exec(tag)?.[1]?.replace(/&amp;/g, '&') : undefined;
  };
  const icon = link('icon');
  const touch = link('apple-touch-icon');
  expect(icon).toBeDefined();
  expect(touch).toBeDefined();
  const svg = await fetch(url(icon!));
  expect(svg.status).toBe(200);
  expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
  expect(await svg.text()).toContain('<svg');
  const png = await fetch(url(touch!));
  expect(png.status).toBe(200);
  expect(png.headers.get('content-type')).toBe('image/png');
  const bytes = Buffer.from(await png.arrayBuffer());
  expect(bytes.readUInt32BE(16)).toBe(180); // the PNG header's width
});
