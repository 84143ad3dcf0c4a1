// Live workspace pages in a real Chromium against the whole process, with two (and more) browser
// profiles as members of one workspace: a project created by one appears on the other's overview
// without a reload, with its activity; an invitation and a removal show on the other's members
// page; each sees the other's face among "also viewing", gone when the other leaves; the removed
// member's page sends them to their workspaces; a member of another workspace sees nothing of
// it; "Reconnecting…" shows while the socket is down and goes once it is back. The live token is
// short (20 s here), so pages renew it several times during the test. Screenshots at desktop and
// 390 px, light and dark; axe finds no serious problem.
import type { BrowserContext, Page, WebSocketRoute } from 'playwright-core';
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
  confirmDialog,
  createWorkspaceInBrowser,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';
import { flashAfter } from '../support/flash.js';

const PASSWORD = 'correct horse battery';
const LIVE = 10_000;

let suite: BrowserSuite;
let slug: string;
let workspaceId: string;
const ids: Record<string, string> = {};

async function userId(email: string): Promise<string> {
  const { rows } = await suite.db.query<{ id: string }>('select id from auth.users where email = $1', [
    email,
  ]);
  return rows[0]!.id;
}

async function addMember(email: string, role: 'admin' | 'member' | 'viewer'): Promise<void> {
  await suite.db.query(
    `insert into public.workspace_members (workspace_id, user_id, role)
     select $1, id, $3 from auth.users where email = $2`,
    [workspaceId, email, role],
  );
}

/** Signs in an existing user in a new profile of the given look. */
async function signIn(
  email: string,
  look: { theme: 'light' | 'dark'; size?: { width: number; height: number } } = { theme: 'light' },
): Promise<Page> {
  const context = await themedContext(suite.browser, { ...look, url: suite.app.url });
  const page = await context.newPage();
  await page.goto(`${suite.app.url}/sign-in`);
  await page.fill('input[name=email]', email);
  await page.fill('input[name=password]', PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL('**/workspaces');
  return page;
}

/** The ids of the people a page shows as also viewing the workspace. */
function viewersOn(page: Page): Promise<string[]> {
  return page.$$eval('[data-live-viewers] [data-viewer]', (els) =>
    els.map((e) => e.getAttribute('data-viewer')!),
  );
}

async function waitForViewers(page: Page, expected: string[]): Promise<void> {
  const want = [...expected].sort();
  await page.waitForFunction(
    (want) => {
      const got = [...document.querySelectorAll('[data-live-viewers] [data-viewer]')]
        .map((e) => e.getAttribute('data-viewer')!)
        .sort();
      return JSON.stringify(got) === JSON.stringify(want);
    },
    want,
    { timeout: LIVE },
  );
}

/** Marks the page's document, so a later check can tell it was not reloaded. */
async function mark(page: Page): Promise<void> {
  await page.evaluate(() => {
    (window as unknown as { liveMark: number }).liveMark = 1;
  });
}
async function stillMarked(page: Page): Promise<boolean> {
  return page.evaluate(() => (window as unknown as { liveMark?: number }).liveMark === 1);
}

beforeAll(async () => {
  suite = await startBrowserSuite({ APP_LIVE_TOKEN_SECONDS: '20' });
  const first = await signUpInBrowser(suite, 'live-ada@example.com');
  slug = await createWorkspaceInBrowser(suite, first, 'Live Labs');
  await first.context().close();
  workspaceId = (
    await suite.db.query<{ id: string }>('select id from public.workspaces where slug = $1', [slug])
  ).rows[0]!.id;
  for (const email of ['live-grace@example.com', 'live-eve@example.com', 'live-cy@example.com']) {
    const page = await signUpInBrowser(suite, email);
    if (email === 'live-cy@example.com') await createWorkspaceInBrowser(suite, page, 'Elsewhere');
    await page.context().close();
  }
  await addMember('live-grace@example.com', 'admin');
  await addMember('live-eve@example.com', 'member');
  for (const name of ['ada', 'grace', 'eve', 'cy']) ids[name] = await userId(`live-${name}@example.com`);
}, 120_000);
afterAll(async () => {
  await suite?.stop();
});

test(
  'two members see each other, and each other’s projects, invitations and removals, without a reload',
  { timeout: 180_000 },
  async () => {
    const ada = await signIn('live-ada@example.com');
    const grace = await signIn('live-grace@example.com', { theme: 'dark' });
    const cy = await signIn('live-cy@example.com');
    await ada.goto(`${suite.app.url}/w/${slug}`);
    await grace.goto(`${suite.app.url}/w/${slug}`);
    await cy.goto(`${suite.app.url}/w/elsewhere`);

    // Presence: each sees the other, never themselves; a member of another workspace sees no one.
    await waitForViewers(ada, [ids.grace!]);
    await waitForViewers(grace, [ids.ada!]);
    // Named for screen readers (the face itself is decoration).
    expect(await ada.locator('[data-live-viewers]').textContent()).toContain('live-grace@example.com');
    expect(await viewersOn(cy)).toEqual([]);
    await expect(ada.textContent('[data-live-status]')).resolves.toBe('');

    // A project created by Ada appears on Grace's overview, with its activity, without a reload.
    await mark(grace);
    await ada.fill('form:has(button:text("Add project")) input[name=name]', 'Rocket');
    await flashAfter(ada, () => ada.click('text=Add project'));
    const created = Date.now();
    await grace.waitForSelector('ul[aria-label=Projects] >> text=Rocket', { timeout: LIVE });
    console.log(
      `a project on another member's overview ${Date.now() - created} ms after its creator's page said so`,
    );
    await grace.waitForSelector('ol[aria-label=Activity] >> text=Rocket', { timeout: LIVE });
    expect(await stillMarked(grace)).toBe(true);
    // Cy, elsewhere, got nothing of it.
    await ada.waitForTimeout(500);
    expect(await cy.locator('text=Rocket').count()).toBe(0);
    await shoot(ada, 'live-overview');
    await shoot(grace, 'live-overview-dark');
    expect(await seriousViolations(ada)).toEqual([]);
    expect(await seriousViolations(grace)).toEqual([]);

    // Renamed by Grace: Ada's list follows.
    await mark(ada);
    await grace.click('[aria-label="Actions for Rocket"]');
    await grace.getByRole('menuitem', { name: 'Rename' }).click();
    const dialog = grace.getByRole('dialog');
    await dialog.locator('input[name=name]').fill('Rocket II');
    await flashAfter(grace, () => dialog.getByRole('button', { name: 'Save' }).click());
    await ada.waitForSelector('ul[aria-label=Projects] >> text=Rocket II', { timeout: LIVE });
    expect(await stillMarked(ada)).toBe(true);

    // The members page: moving there keeps the connection (and the faces).
    await ada.click('nav >> text=Members');
    await ada.waitForURL(`**/w/${slug}/members`);
    await grace.click('nav >> text=Members');
    await grace.waitForURL(`**/w/${slug}/members`);
    await waitForViewers(ada, [ids.grace!]);
    await mark(grace);
    await ada.fill('input[name=email]', 'live-dan@example.com');
    await flashAfter(ada, () => ada.click('text=Send invitation'));
    await grace.waitForSelector('ul[aria-label="Pending invitations"] >> text=live-dan@example.com', {
      timeout: LIVE,
    });
    expect(await stillMarked(grace)).toBe(true);
    await shoot(grace, 'live-members-dark');
    expect(await seriousViolations(grace)).toEqual([]);

    // Eve is on the overview when Grace removes her: Ada's list loses her, Eve is sent away.
    const eve = await signIn('live-eve@example.com');
    await eve.goto(`${suite.app.url}/w/${slug}`);
    await waitForViewers(ada, [ids.grace!, ids.eve!]);
    await ada.waitForSelector('ul[aria-label=Members] >> text=live-eve@example.com');
    await mark(ada);
    await grace.click('[aria-label="Remove live-eve@example.com"]');
    await flashAfter(grace, () => confirmDialog(grace, 'Remove member'));
    await eve.waitForURL('**/workspaces', { timeout: LIVE });
    await expect(eve.waitForSelector('[data-flash]')).resolves.toBeTruthy();
    expect(await eve.textContent('body')).toContain('You are no longer a member of that workspace');
    await ada.waitForFunction(
      () => !document.querySelector('ul[aria-label=Members]')?.textContent?.includes('live-eve@example.com'),
      undefined,
      { timeout: LIVE },
    );
    expect(await stillMarked(ada)).toBe(true);
    // Eve's face went from Ada's header with her.
    await waitForViewers(ada, [ids.grace!]);

    // Grace leaves: her face goes from Ada's header.
    await grace.context().close();
    const left = Date.now();
    await waitForViewers(ada, []);
    console.log(`a face gone ${Date.now() - left} ms after its page closed`);
    await Promise.all([ada, cy, eve].map((p) => p.context().close()));
  },
);

test(
  '"Reconnecting…" shows while the socket is down and goes when it is back',
  { timeout: 120_000 },
  async () => {
    const looks: { name: string; theme: 'light' | 'dark'; size: { width: number; height: number } }[] = [
      { name: 'live-reconnecting', theme: 'light', size: DESKTOP },
      { name: 'live-reconnecting-phone', theme: 'light', size: PHONE },
      { name: 'live-reconnecting-phone-dark', theme: 'dark', size: PHONE },
    ];
    const grace = await signIn('live-grace@example.com');
    await grace.goto(`${suite.app.url}/w/${slug}`);
    for (const look of looks) {
      const context: BrowserContext = await themedContext(suite.browser, {
        theme: look.theme,
        size: look.size,
        url: suite.app.url,
      });
      // Every realtime socket of this profile goes through here, so the test can cut it.
      let blocked = false;
      const open: WebSocketRoute[] = [];
      await context.routeWebSocket(/\/realtime\/v1\/websocket/, (route) => {
        if (blocked) return route.close({ code: 4000, reason: 'blocked' });
        route.connectToServer();
        open.push(route);
      });
      const ada = await context.newPage();
      await ada.goto(`${suite.app.url}/sign-in`);
      await ada.fill('input[name=email]', 'live-ada@example.com');
      await ada.fill('input[name=password]', PASSWORD);
      await ada.click('button[type=submit]');
      await ada.waitForURL('**/workspaces');
      await ada.goto(`${suite.app.url}/w/${slug}`);
      await waitForViewers(ada, [ids.grace!]);
      await shoot(ada, `${look.name.replace('reconnecting', 'connected')}`);
      expect((await sidewaysOverflow(ada)).by).toBe(0);

      blocked = true;
      for (const route of open.splice(0)) await route.close({ code: 4000, reason: 'dropped' });
      const status = ada.locator('[data-live-status]');
      await status.getByText('Reconnecting…').waitFor({ timeout: LIVE });
      expect(await status.getAttribute('role')).toBe('status');
      // Nobody is shown as here while the connection is down.
      expect(await viewersOn(ada)).toEqual([]);
      await shoot(ada, look.name);
      expect(await seriousViolations(ada)).toEqual([]);
      expect((await sidewaysOverflow(ada)).by).toBe(0);

      blocked = false;
      const restored = Date.now();
      await ada.waitForFunction(
        () => document.querySelector('[data-live-status]')?.textContent === '',
        undefined,
        { timeout: 20_000 },
      );
      console.log(`"Reconnecting…" gone ${Date.now() - restored} ms after the socket was let through`);
      await waitForViewers(ada, [ids.grace!]);
      await context.close();
    }
    await grace.context().close();
  },
);
