// The workspace pages' details, in Chromium: cards whose list is empty close with the padding they
// open with; counts read "1 project", never "1 projects"; the overview's projects are paged and
// searched with the page and search kept in the address; a workspace's old address cannot be
// taken by another workspace while it leads to its own; and no menu, open, leaves the page hidden
// but focusable (axe's aria-hidden-focus). Every page is checked and shot at desktop and 390 px,
// light and dark, to test-results/screenshots/pages/details-*.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  cardBottomPadding,
  inEveryLook,
  openMenuViolations,
  seriousViolations,
  shoot,
} from '../support/browser-checks.js';
import {
  createWorkspaceInBrowser,
  fieldError,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';

let suite: BrowserSuite;
let ada: Page;
let slug: string;
let workspaceId: string;
let projectId: string;
let cookies: { name: string; value: string; url: string }[];
const url = (path: string) => `${suite.app.url}${path}`;

beforeAll(async () => {
  suite = await startBrowserSuite();
  ada = await signUpInBrowser(suite, 'ada@example.com');
  slug = await createWorkspaceInBrowser(suite, ada, 'Analytical');
  workspaceId = (
    await suite.db.query<{ id: string }>('select id from public.workspaces where slug = $1', [slug])
  ).rows[0]!.id;
  const adaId = (
    await suite.db.query<{ id: string }>(`select id from auth.users where email = 'ada@example.com'`)
  ).rows[0]!.id;
  // A second member, so the members page has a role menu.
  await suite.db.query(
    `with grace as (insert into auth.users (email, email_confirmed_at) values ('grace@example.com', now()) returning id)
     insert into public.workspace_members (workspace_id, user_id, role) select $1, id, 'member' from grace`,
    [workspaceId],
  );
  projectId = (
    await suite.db.query<{ id: string }>(
      `insert into public.projects (workspace_id, name, created_by) values ($1, 'Engine', $2) returning id`,
      [workspaceId, adaId],
    )
  ).rows[0]!.id;
  cookies = (await ada.context().cookies())
    .filter((c) => c.name.startsWith('sb-'))
    .map((c) => ({ name: c.name, value: c.value, url: suite.app.url }));
}, 240_000);
afterAll(async () => suite?.stop());

/** Runs `check` signed in as Ada in each of the four looks. */
async function asAdaInEveryLook(path: string, check: (page: Page, look: string) => Promise<void>) {
  await inEveryLook(suite.browser, suite.app.url, async (page, look) => {
    await page.context().addCookies(cookies);
    await page.goto(url(path));
    await check(page, look);
  });
}

describe('empty lists', () => {
  const pages: [name: string, path: () => string][] = [
    ['members', () => `/w/${slug}/members`],
    ['project', () => `/w/${slug}/projects/${projectId}`],
    ['overview-search', () => `/w/${slug}?q=nothing-like-this`],
    ['billing', () => `/w/${slug}/billing`],
    ['settings', () => `/w/${slug}/settings`],
    ['notifications', () => '/settings/notifications'],
  ];
  test.each(pages)('cards on %s close as evenly as they open', async (name, path) => {
    await asAdaInEveryLook(path(), async (page, look) => {
      const cards = await cardBottomPadding(page);
      expect(cards.length, `${name} ${look}`).toBeGreaterThan(0);
      for (const card of cards) {
        expect(card.bottom, `${name} ${look}: ${card.card} bottom`).toBeGreaterThanOrEqual(12);
      }
      expect(await seriousViolations(page), `${name} ${look}`).toEqual([]);
      await shoot(page, `details-empty-${name}-${look}`);
    });
  });
});

describe('counts', () => {
  test('one of something reads in the singular, none and many in the plural', async () => {
    await ada.goto(url('/workspaces'));
    const card = (await ada.textContent('ul[aria-label="Workspaces"]')) ?? '';
    expect(card).toContain('2 members');
    expect(card).toContain('1 project');
    expect(card).not.toMatch(/\b1 projects\b/);

    await ada.goto(url(`/w/${slug}`));
    await expect(ada.textContent('#projects + p')).resolves.toMatch(/^1 project, newest first\./);
    await ada.goto(url(`/w/${slug}/members`));
    await expect(ada.textContent('main')).resolves.toContain('2 members of Analytical');
    await ada.goto(url(`/w/${slug}/projects/${projectId}`));
    await expect(ada.textContent('#files + p')).resolves.toBe('Nothing attached yet.');
  });
});

describe('projects', () => {
  beforeAll(async () => {
    await suite.db.query(
      `insert into public.projects (workspace_id, name, created_at)
       select $1, format('Lab %s', lpad(i::text, 2, '0')), now() - make_interval(mins => i)
       from generate_series(1, 45) i`,
      [workspaceId],
    );
  });

  test('paged and searched on the server, the address keeping both, by keyboard', async () => {
    await ada.goto(url(`/w/${slug}`));
    await expect(ada.textContent('#projects + p')).resolves.toMatch(/^46 projects, newest first\./);
    await ada.locator('#project-search').focus();
    await ada.keyboard.type('Lab 1');
    await ada.keyboard.press('Enter');
    await ada.waitForURL((u) => u.searchParams.get('q') === 'Lab 1');
    await expect(ada.textContent('#projects + p')).resolves.toMatch(/^10 projects matching “Lab 1”/);
    const names = await ada.locator('ul[aria-label=Projects] [data-project-name]').allTextContents();
    expect(names.every((n) => n.startsWith('Lab 1'))).toBe(true);

    await ada.goto(url(`/w/${slug}?q=Lab`));
    await ada.getByRole('link', { name: 'Next page of projects' }).focus();
    await ada.keyboard.press('Enter');
    await ada.waitForURL((u) => u.searchParams.get('page') === '2' && u.searchParams.get('q') === 'Lab');
    await expect(ada.textContent('nav[aria-label="Projects pages"] [aria-current=page]')).resolves.toBe('2');
    await expect(ada.inputValue('#project-search')).resolves.toBe('Lab');

    await ada.goto(url(`/w/${slug}?q=${encodeURIComponent('no such project')}`));
    await expect(ada.textContent('p[role=status]')).resolves.toContain(
      'No project matches “no such project”.',
    );
    await expect(ada.textContent('#projects + p')).resolves.toMatch(/^0 projects matching/);

    await asAdaInEveryLook(`/w/${slug}?q=Lab&page=2`, async (page, look) => {
      expect(await seriousViolations(page), look).toEqual([]);
      await shoot(page, `details-projects-page-2-${look}`);
    });
  });
});

describe('menus', () => {
  const pages: [name: string, path: () => string][] = [
    ['overview', () => `/w/${slug}?q=Engine`],
    ['members', () => `/w/${slug}/members`],
    ['workspaces', () => '/workspaces'],
  ];
  test.each(pages)(
    'every menu on %s, open, passes axe',
    async (name, path) => {
      await asAdaInEveryLook(path(), async (page, look) => {
        const menus = await openMenuViolations(page, (_menu, i) =>
          shoot(page, `details-menu-${name}-${i + 1}-${look}`, { fullPage: false }),
        );
        expect(menus.length, `${name} ${look}`).toBeGreaterThanOrEqual(name === 'workspaces' ? 1 : 2);
        for (const { menu, violations } of menus) expect(violations, `${name} ${look}: ${menu}`).toEqual([]);
      });
    },
    120_000,
  );
});

describe('old addresses', () => {
  test('another workspace cannot take an address that still leads to Ada’s', async () => {
    await ada.goto(url(`/w/${slug}/settings`));
    await ada.fill('input[name=new_slug]', 'analytical-engine');
    await ada.click('text=Save changes');
    await ada.waitForURL('**/w/analytical-engine/settings');

    const bob = await signUpInBrowser(suite, 'bob@example.com');
    const bobs = await createWorkspaceInBrowser(suite, bob, 'Babbage');
    await bob.goto(url(`/w/${bobs}/settings`));
    await bob.fill('input[name=new_slug]', slug);
    await bob.click('text=Save changes');
    await expect(fieldError(bob, 'new_slug')).resolves.toBe('That address is taken; choose another');
    await expect(bob.inputValue('input[name=new_slug]')).resolves.toBe(slug);
    const row = await suite.db.query('select slug from public.workspaces where name = $1', ['Babbage']);
    expect(row.rows[0].slug).toBe(bobs);

    // Ada's old address still leads to her workspace.
    await ada.goto(url(`/w/${slug}/members`));
    await ada.waitForURL('**/w/analytical-engine/members');
    slug = 'analytical-engine';
  });
});
