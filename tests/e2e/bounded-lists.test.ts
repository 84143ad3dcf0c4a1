// Pages stay the same size whatever the data behind them. An account that owns far more
// workspaces than MAX_WORKSPACES_PER_USER allows (old data, seeded by the service) cannot create
// another from the web form, which says why; every page it opens (the workspace list, a crowded
// workspace's overview and members, the notification settings, any page with the switcher) stays
// under a fixed size, and every workspace, member, invitation, project and event can still be
// reached by paging or searching. The lists' pages pass axe-core and fit a 390 px phone; their
// screenshots go to test-results/screenshots/pages/.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  DESKTOP,
  PHONE,
  seriousViolations,
  shoot,
  sidewaysOverflow,
  themedContext,
} from '../support/browser-checks.js';
import {
  formError,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';

const LIMIT = 5;
const WORKSPACES = 300;
const MEMBERS = 200;
const INVITATIONS = 60;
const PROJECTS = 75;
/** No page may be larger than this, however many rows stand behind it. */
const MAX_PAGE_BYTES = 256 * 1024;

let suite: BrowserSuite;
let page: Page;
let userId: string;
let cookie: string;
const url = (path: string) => `${suite.app.url}${path}`;

beforeAll(async () => {
  suite = await startBrowserSuite({
    MAX_WORKSPACES_PER_USER: String(LIMIT),
    BILLING_PLANS: '[]',
    FREE_PLAN_SEATS: '100000',
  });
  page = await signUpInBrowser(suite, 'many@example.com');
  userId = (
    await suite.db.query<{ id: string }>(`select id from auth.users where email = 'many@example.com'`)
  ).rows[0]!.id;
  // Old data: far more workspaces than the limit allows, a crowded one among them.
  await suite.db.query(
    `with made as (
       insert into public.workspaces (name, slug, created_by)
       select format('Team %s', lpad(i::text, 3, '0')), format('team-%s', i), $1::uuid
       from generate_series(1, $2::int) i
       union all select 'Rocket_100% Lab', 'rocket-lab', $1::uuid
       union all select 'Crowded', 'crowded', $1::uuid
       returning id)
     insert into public.workspace_members (workspace_id, user_id, role) select id, $1::uuid, 'owner' from made`,
    [userId, WORKSPACES],
  );
  await suite.db.query(
    `with people as (
       insert into auth.users (email, email_confirmed_at)
       select format('member%s@example.com', lpad(i::text, 3, '0')), now() from generate_series(1, $1::int) i
       returning id)
     insert into public.workspace_members (workspace_id, user_id, role)
     select (select id from public.workspaces where slug = 'crowded'), id, 'member' from people`,
    [MEMBERS],
  );
  await suite.db.query(
    `insert into public.invitations (workspace_id, email, role, invited_by, expires_at)
     select (select id from public.workspaces where slug = 'crowded'),
            format('invitee%s@example.com', lpad(i::text, 3, '0')), 'member', $2::uuid, now() + interval '7 days'
     from generate_series(1, $1::int) i`,
    [INVITATIONS, userId],
  );
  await suite.db.query(
    `insert into public.projects (workspace_id, name, created_by, created_at)
     select (select id from public.workspaces where slug = 'crowded'), format('Project %s', lpad(i::text, 3, '0')),
            $2::uuid, now() - make_interval(secs => i)
     from generate_series(1, $1::int) i`,
    [PROJECTS, userId],
  );
  cookie = (await page.context().cookies())
    .filter((c) => c.name.startsWith('sb-'))
    .map((c) => `${c.name}=${c.value}`)
    .join('; ');
}, 300_000);
afterAll(async () => suite?.stop());

/** The page's HTML as the signed-in user gets it. */
async function html(path: string): Promise<string> {
  const res = await fetch(url(path), { headers: { cookie }, redirect: 'manual' });
  expect(res.status, path).toBe(200);
  return res.text();
}

/** The part of the HTML from `start` to the end of the element it opens (`</tag>`). */
function within(text: string, start: string, tag: string): string {
  const at = text.indexOf(start);
  if (at < 0) return '';
  return text.slice(at, text.indexOf(`</${tag}>`, at));
}

/** The href of the link named `label` (its aria-label), if the page has one. */
function linkNamed(text: string, label: string): string | null {
  for (const a of text.match(/<a [^>]*>/g) ?? []) {
    if (a.includes(`aria-label="${label}"`)) return /href="([^"]*)"/.exec(a)![1]!.replaceAll('&amp;', '&');
  }
  return null;
}

/** Walks a list from `path` by its Next links, collecting what `pick` finds on each page. */
async function walk(path: string, next: string, pick: (page: string) => string[]): Promise<string[]> {
  const found: string[] = [];
  let at: string | null = path;
  for (let pages = 0; at && pages < 100; pages++) {
    const text = await html(at);
    found.push(...pick(text));
    at = linkNamed(text, next);
  }
  return found;
}

const all = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].map((m) => m[1]!);
const workspaceLinks = (text: string) =>
  all(within(text, '<ul aria-label="Workspaces"', 'ul'), /href="\/w\/([a-z0-9-]+)"/g);

describe('an account with more workspaces than the limit', () => {
  test('the web form refuses another workspace and says why; nothing is created', async () => {
    const before = await suite.db.query(
      'select count(*)::int as n from public.workspaces where created_by = $1',
      [userId],
    );
    await page.goto(url('/workspaces'));
    await page.fill('#new-workspace input[name=name]', 'One more');
    await page.click('text=Create workspace');
    expect(await formError(page)).toBe(
      `You already own ${WORKSPACES + 2} workspaces, the most one account may own. ` +
        'Delete a workspace you no longer use, or make someone else its owner and leave it.',
    );
    await expect(page.inputValue('#new-workspace input[name=name]')).resolves.toBe('One more');
    const after = await suite.db.query(
      'select count(*)::int as n from public.workspaces where created_by = $1',
      [userId],
    );
    expect(after.rows[0]).toEqual(before.rows[0]);
  });

  test('every page stays under a fixed size', async () => {
    const sizes: Record<string, number> = {};
    for (const path of [
      '/workspaces',
      '/workspaces?page=7',
      '/workspaces?page=999999',
      '/w/crowded',
      '/w/crowded/members',
      '/settings/notifications',
      '/settings/profile',
    ]) {
      sizes[path] = Buffer.byteLength(await html(path));
    }
    console.log(`page sizes (bytes): ${JSON.stringify(sizes)}`);
    for (const [path, bytes] of Object.entries(sizes)) expect(bytes, path).toBeLessThan(MAX_PAGE_BYTES);
  });

  test('every workspace can be reached by paging, and found by searching', async () => {
    const first = await html('/workspaces');
    expect(workspaceLinks(first)).toHaveLength(24);
    expect(first).toContain('1–24 of 302');
    const slugs = await walk('/workspaces', 'Next page of workspaces', workspaceLinks);
    expect(slugs).toHaveLength(WORKSPACES + 2);
    expect(new Set(slugs)).toEqual(
      new Set([...Array.from({ length: WORKSPACES }, (_, i) => `team-${i + 1}`), 'rocket-lab', 'crowded']),
    );

    // A page past the end shows the last one; a search's wildcards are taken literally.
    const last = workspaceLinks(await html('/workspaces?page=13'));
    expect(last).toHaveLength(WORKSPACES + 2 - 12 * 24);
    expect(workspaceLinks(await html('/workspaces?page=999999'))).toEqual(last);
    expect(workspaceLinks(await html('/workspaces?q=team%20217'))).toEqual(['team-217']);
    expect(workspaceLinks(await html('/workspaces?q=100%25'))).toEqual(['rocket-lab']);
    expect(workspaceLinks(await html('/workspaces?q=_'))).toEqual(['rocket-lab']);
    expect(workspaceLinks(await html('/workspaces?q=crowded'))).toEqual(['crowded']);
    expect(await html('/workspaces?q=nothing%20like%20it')).toContain('No workspace of yours matches');
  });

  test('members, invitations, projects and activity page through to their ends', async () => {
    const members = await walk('/w/crowded/members', 'Next page of members', (t) =>
      all(t, /data-member="([^"]+)"/g),
    );
    expect(members).toHaveLength(MEMBERS + 1);
    expect(new Set(members).size).toBe(MEMBERS + 1);
    expect(all(await html('/w/crowded/members?q=member123'), /data-member="([^"]+)"/g)).toEqual([
      'member123@example.com',
    ]);

    const invitations = await walk('/w/crowded/members', 'Next page of invitations', (t) =>
      all(t, /data-invitation="([^"]+)"/g),
    );
    expect(new Set(invitations).size).toBe(INVITATIONS);
    expect(all(await html('/w/crowded/members?iq=invitee042'), /data-invitation="([^"]+)"/g)).toEqual([
      'invitee042@example.com',
    ]);
    // Paging one list keeps the other's place.
    const both = await html('/w/crowded/members?page=2&ipage=3');
    expect(linkNamed(both, 'Next page of members')).toBe('/w/crowded/members?ipage=3&page=3');

    const projects = await walk('/w/crowded', 'Next page of projects', (t) =>
      all(t, /data-project-name=""[^>]*>([^<]*)</g),
    );
    expect(projects).toEqual(
      Array.from({ length: PROJECTS }, (_, i) => `Project ${String(i + 1).padStart(3, '0')}`),
    );
    expect(all(await html('/w/crowded?q=project%20042'), /data-project-name=""[^>]*>([^<]*)</g)).toEqual([
      'Project 042',
    ]);

    const events = await walk('/w/crowded', 'Next page of activity', (t) =>
      all(within(t, '<ol aria-label="Activity"', 'ol'), /<li [^>]*>/g),
    );
    const logged = await suite.db.query(
      `select count(*)::int as n from public.activity_events where workspace_id = (select id from public.workspaces where slug = 'crowded')`,
    );
    expect(events).toHaveLength(logged.rows[0]!.n as number);
    expect(events.length).toBeGreaterThan(MEMBERS);
  });

  test('saving the digest settings of one page keeps the other pages’ choices', async () => {
    await page.goto(url('/settings/notifications'));
    await page.getByLabel('Crowded').check();
    await page.click('text=Save preferences');
    await page.waitForURL('**/settings/notifications');
    await page.goto(url('/settings/notifications?page=2'));
    await page.getByLabel('Team 030', { exact: true }).check();
    await page.click('text=Save preferences');
    await page.waitForURL((u) => u.pathname === '/settings/notifications' && u.search === '');
    const r = await suite.db.query<{ slug: string }>(
      `select w.slug from public.notification_preferences n, unnest(n.muted_workspace_ids) m(id)
       join public.workspaces w on w.id = m.id where n.user_id = $1 order by w.slug`,
      [userId],
    );
    expect(r.rows.map((x) => x.slug)).toEqual(['crowded', 'team-30']);
  });
});

describe('paged lists in the browser', () => {
  test('pass axe-core, fit a phone, and offer the rest from the switcher', { timeout: 180_000 }, async () => {
    const state = await page.context().storageState();
    for (const [size, suffix] of [
      [DESKTOP, ''],
      [PHONE, '-phone'],
    ] as const) {
      for (const theme of ['light', 'dark'] as const) {
        const context = await themedContext(suite.browser, { theme, size, url: suite.app.url });
        await context.addCookies(state.cookies);
        const p = await context.newPage();
        for (const [path, name] of [
          ['/workspaces?page=2', 'workspaces-paged'],
          ['/workspaces?q=team%2021', 'workspaces-search'],
          ['/w/crowded', 'workspace-paged'],
          ['/w/crowded/members?page=2', 'members-paged'],
          ['/settings/notifications?page=2', 'notifications-paged'],
        ] as const) {
          await p.goto(url(path));
          expect(await seriousViolations(p), `${path} ${theme}${suffix}`).toEqual([]);
          if (size === PHONE) expect((await sidewaysOverflow(p)).by, `${path}${suffix}`).toBe(0);
          await shoot(p, `${name}${suffix}${theme === 'dark' ? '-dark' : ''}`);
        }
        await context.close();
      }
    }

    // The switcher lists a few workspaces and sends the rest to the searchable list.
    await page.goto(url('/w/crowded'));
    await page.click('[data-workspace-switcher]');
    const menu = page.getByRole('menu');
    await menu.waitFor();
    expect(await menu.getByRole('menuitem').count()).toBeLessThanOrEqual(8 + 3);
    await shoot(page, 'switcher-many', { fullPage: false });
    await menu.getByRole('menuitem', { name: 'Find a workspace…' }).click();
    await page.waitForURL((u) => u.pathname === '/workspaces');
    await page.fill('#workspace-search', 'Team 250');
    await page.click('button:has-text("Search")');
    await page.waitForURL((u) => u.searchParams.get('q') === 'Team 250');
    await page.click('ul[aria-label=Workspaces] a');
    await page.waitForURL('**/w/team-250');

    // The pager is plain links with names, the current page marked.
    await page.goto(url('/workspaces?page=3'));
    const pager = page.getByRole('navigation', { name: 'Workspaces pages' });
    await expect(pager.locator('[aria-current=page]').textContent()).resolves.toBe('3');
    await pager.getByRole('link', { name: 'Next page of workspaces' }).click();
    await page.waitForURL((u) => u.searchParams.get('page') === '4');
    await expect(
      page.locator('nav[aria-label="Workspaces pages"] [aria-current=page]').textContent(),
    ).resolves.toBe('4');
  });
});
