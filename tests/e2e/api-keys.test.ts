// Workspace API keys in the web app, in Chromium on the real process: an owner makes a key on
// /w/<slug>/settings/api-keys (a missing name refused under its field), sees the secret once with a
// copy button, and the key works on the data API; the list shows it; revoking asks first, and the
// key is refused from the next request. A member is told only admins and owners manage keys. Every
// look (light and dark, desktop and 390 px) is axe clean, fits the width, and is photographed.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { inEveryLook, seriousViolations, shoot, sidewaysOverflow } from '../support/browser-checks.js';
import {
  confirmDialog,
  createWorkspaceInBrowser,
  fieldError,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';

let suite: BrowserSuite;
beforeAll(async () => {
  suite = await startBrowserSuite();
}, 300_000);
afterAll(async () => suite?.stop());

const url = (path: string) => `${suite.app.url}${path}`;

async function checkEveryLook(page: Page, path: string, name: string, ready: (p: Page) => Promise<void>) {
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

const projects = (key: string) =>
  fetch(url('/rest/v1/projects?select=name'), {
    headers: { apikey: suite.app.env.PROJECT_API_KEY!, authorization: `Bearer ${key}` },
  });

test('an owner makes a key, sees it once, uses it, and revokes it', { timeout: 180_000 }, async () => {
  const page = await signUpInBrowser(suite, `keys-owner-${Date.now()}@example.com`);
  const slug = await createWorkspaceInBrowser(suite, page, 'Key Works');
  await page.goto(url(`/w/${slug}/settings`));
  await page.getByRole('link', { name: 'Manage API keys' }).click();
  await page.waitForURL(`**/w/${slug}/settings/api-keys`);
  await page.getByText('No keys yet.').waitFor();

  await page.getByRole('button', { name: 'Create key' }).click();
  expect(await fieldError(page, 'name')).toBe('Name the key, e.g. what uses it');
  const none = await suite.db.query('select count(*)::int as n from internal.api_keys');
  expect(none.rows[0]).toEqual({ n: 0 });

  await page.getByLabel('Name').fill('CI deploys');
  await page.getByLabel('Role').selectOption('viewer');
  await page.getByRole('button', { name: 'Create key' }).click();
  const shown = page.getByLabel('New API key');
  await shown.waitFor();
  const key = ((await shown.textContent()) ?? '').trim();
  expect(key).toMatch(/^tnt_[0-9a-f]{16}[A-Za-z0-9_-]{43}$/);
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
  await page.getByRole('button', { name: 'Copy key' }).click();
  await page.getByRole('button', { name: 'Copied' }).waitFor();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);
  await shoot(page, 'api-key-created');
  // The list shows the new key beside its secret, shown once.
  await page.locator('[data-api-key="CI deploys"]').waitFor();
  expect((await projects(key)).status).toBe(200);

  await page.getByRole('link', { name: 'I have saved it' }).click();
  const row = page.locator('[data-api-key="CI deploys"]');
  await row.waitFor();
  expect(await row.textContent()).toContain(key.slice(0, 20));
  expect(await row.textContent()).toContain('made by keys-owner-');
  // The secret is shown once: the list never has it.
  expect(await page.content()).not.toContain(key.slice(20));

  await checkEveryLook(page, `/w/${slug}/settings/api-keys`, 'api-keys', (p) =>
    p.locator('[data-api-key="CI deploys"]').waitFor(),
  );

  await row.getByRole('button', { name: 'Revoke the key CI deploys' }).click();
  await page.getByRole('alertdialog').waitFor();
  expect(await seriousViolations(page)).toEqual([]);
  await shoot(page, 'api-key-revoke-confirm', { fullPage: false });
  await confirmDialog(page, 'Revoke key');
  await page.locator('[data-api-key="CI deploys"]').getByText('revoked').waitFor();
  expect((await projects(key)).status).toBe(401);

  // A member is told who manages keys, and gets no form.
  const member = await signUpInBrowser(suite, `keys-member-${Date.now()}@example.com`);
  const memberId = (
    await suite.db.query<{ id: string }>(`select id from auth.users where email like 'keys-member-%'`)
  ).rows[0]!.id;
  await suite.db.query(
    `insert into public.workspace_members (workspace_id, user_id, role)
     select id, $1, 'member' from public.workspaces where slug = $2`,
    [memberId, slug],
  );
  await member.goto(url(`/w/${slug}/settings/api-keys`));
  await member.getByText('Only admins and owners manage API keys.').waitFor();
  expect(await member.getByRole('button', { name: 'Create key' }).count()).toBe(0);
});
