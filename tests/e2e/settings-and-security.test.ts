// The rest of the web app in a real browser: profile and notification preferences saved and
// still there after a reload, workspace rename, project edit and delete, workspace deletion with
// confirmation, deleting one's own account. And its security: no server secret in any client asset, server actions refuse a
// forged Origin, and session cookies are HttpOnly and SameSite=Lax.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { AppProcess } from '../support/app-process.js';
import {
  confirmDialog,
  createWorkspaceInBrowser,
  fieldError,
  formError,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';
import { shoot } from '../support/browser-checks.js';
import { flashAfter } from '../support/flash.js';

const notice = (text: string) => ({ kind: 'notice', text });

let suite: BrowserSuite;
let app: AppProcess;
let db: pg.Client;

beforeAll(async () => {
  suite = await startBrowserSuite();
  ({ app, db } = suite);
}, 300_000);
afterAll(async () => suite?.stop());

const signedIn = (email: string): Promise<Page> => signUpInBrowser(suite, email);

test('profile and notification preferences are saved and reloaded', { timeout: 120_000 }, async () => {
  const page = await signedIn('prefs@example.com');
  await page.fill('input[name=name]', 'Muted Co');
  await expect(flashAfter(page, () => page.click('text=Create workspace'))).resolves.toEqual(
    notice('Workspace Muted Co created'),
  );

  await page.goto(`${app.url}/settings/profile`);
  await page.fill('input[name=display_name]', 'Ada Lovelace');
  await expect(flashAfter(page, () => page.click('text=Save profile'))).resolves.toEqual(
    notice('Profile saved'),
  );
  await page.reload();
  expect(await page.inputValue('input[name=display_name]')).toBe('Ada Lovelace');

  await page.goto(`${app.url}/settings/notifications`);
  await page.check('input[name=digest_frequency][value=daily]');
  await page.check('input[name=muted]');
  await expect(flashAfter(page, () => page.click('text=Save preferences'))).resolves.toEqual(
    notice('Preferences saved'),
  );
  await page.reload();
  expect(await page.isChecked('input[name=digest_frequency][value=daily]')).toBe(true);
  expect(await page.isChecked('input[name=muted]')).toBe(true);
  const stored = await db.query(
    `select n.digest_frequency, cardinality(n.muted_workspace_ids) as muted from public.notification_preferences n
     join public.profiles p on p.id = n.user_id where p.email = 'prefs@example.com'`,
  );
  expect(stored.rows[0]).toEqual({ digest_frequency: 'daily', muted: 1 });

  // A name too long is refused under its field, what was typed is kept, and nothing changes.
  await page.goto(`${app.url}/settings/profile`);
  // Set as a script would, past the field's own maxlength: the server is what refuses it.
  await page.$eval(
    'input[name=display_name]',
    (e, v) => ((e as HTMLInputElement).value = v),
    'A'.repeat(101),
  );
  await page.click('text=Save profile');
  await expect(fieldError(page, 'display_name')).resolves.toBe('Use at most 100 characters');
  expect(await page.inputValue('input[name=display_name]')).toBe('A'.repeat(101));
  const named = await db.query(`select display_name from public.profiles where email = 'prefs@example.com'`);
  expect(named.rows[0]).toEqual({ display_name: 'Ada Lovelace' });
});

test(
  'deleting one’s own account asks for the password and refuses a team’s last owner',
  { timeout: 120_000 },
  async () => {
    // the last owner of a workspace with another member is told what to do first
    const owner = await signedIn('last-owner@example.com');
    const slug = await createWorkspaceInBrowser(suite, owner, 'Team Keep');
    const mate = await signedIn('teammate@example.com');
    await mate.close();
    await db.query(
      `insert into public.workspace_members (workspace_id, user_id, role)
     select w.id, u.id, 'member' from public.workspaces w, auth.users u
     where w.slug = $1 and u.email = 'teammate@example.com'`,
      [slug],
    );
    await owner.goto(`${app.url}/settings/profile`);
    await owner.fill('input[name=account_password]', 'correct horse battery');
    await owner.click('text=Delete my account');
    await expect(formError(owner)).resolves.toContain('last owner of the workspace "Team Keep"');
    await shoot(owner, 'delete-account-last-owner-light-desktop');
    expect((await db.query(`select 1 from auth.users where email = 'last-owner@example.com'`)).rowCount).toBe(
      1,
    );
    await owner.close();

    const page = await signedIn('leaving@example.com');
    await createWorkspaceInBrowser(suite, page, 'Only Mine');
    await page.goto(`${app.url}/settings/profile`);
    await page.fill('input[name=account_password]', 'not my password');
    await page.click('text=Delete my account');
    await expect(fieldError(page, 'account_password')).resolves.toBe('That is not your current password');
    await shoot(page, 'delete-account-wrong-password-light-desktop');
    await page.setViewportSize({ width: 390, height: 844 });
    await shoot(page, 'delete-account-wrong-password-light-phone');
    expect((await db.query(`select 1 from auth.users where email = 'leaving@example.com'`)).rowCount).toBe(1);

    await page.fill('input[name=account_password]', 'correct horse battery');
    await expect(flashAfter(page, () => page.click('text=Delete my account'))).resolves.toEqual(
      notice('Your account has been deleted'),
    );
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    expect((await db.query(`select 1 from auth.users where email = 'leaving@example.com'`)).rowCount).toBe(0);
    expect((await db.query(`select 1 from public.workspaces where name = 'Only Mine'`)).rowCount).toBe(0);
    // signed out here, and the password no longer signs in
    await page.goto(`${app.url}/settings/profile`);
    expect(new URL(page.url()).pathname).toBe('/sign-in');
    await page.fill('input[name=email]', 'leaving@example.com');
    await page.fill('input[name=password]', 'correct horse battery');
    await page.click('button[type=submit]');
    await expect(formError(page)).resolves.toMatch(/e-mail or password|credentials/i);
    await page.close();
  },
);

test(
  'rename a workspace, edit and delete a project, delete the workspace',
  { timeout: 120_000 },
  async () => {
    const page = await signedIn('settings@example.com');
    await page.fill('input[name=name]', 'Old Name');
    await flashAfter(page, () => page.click('text=Create workspace'));
    await page.waitForURL('**/w/old-name');
    await page.fill('input[name=name]', 'Engine');
    await expect(flashAfter(page, () => page.click('text=Add project'))).resolves.toEqual(
      notice('Project created'),
    );
    await page.click('[aria-label="Actions for Engine"]');
    await page.getByRole('menuitem', { name: 'Rename' }).click();
    await page.getByRole('dialog').locator('input[name=name]').fill('Difference Engine');
    await expect(
      flashAfter(page, () => page.getByRole('dialog').getByRole('button', { name: 'Save' }).click()),
    ).resolves.toEqual(notice('Project renamed'));
    await expect(page.textContent('ul[aria-label=Projects] [data-project-name]')).resolves.toBe(
      'Difference Engine',
    );
    await page.click('[aria-label="Actions for Difference Engine"]');
    await page.getByRole('menuitem', { name: 'Delete' }).click();
    await expect(flashAfter(page, () => confirmDialog(page, 'Delete project'))).resolves.toEqual(
      notice('Project deleted'),
    );
    await expect(page.textContent('ul[aria-label=Projects]')).resolves.toBe('');

    await page.goto(`${app.url}/w/old-name/settings`);
    await page.fill('input[name=name]', 'New Name');
    await page.fill('input[name=new_slug]', 'new-name');
    await expect(flashAfter(page, () => page.click('text=Save changes'))).resolves.toEqual(
      notice('Settings saved'),
    );
    await page.waitForURL('**/w/new-name/settings');
    await expect.poll(() => page.title()).toBe('Settings · New Name · Tenantry');
    // The old address leads to the new one.
    await page.goto(`${app.url}/w/old-name/members`);
    await page.waitForURL('**/w/new-name/members');

    await page.goto(`${app.url}/w/new-name/settings`);
    await page.click('text=Delete workspace');
    const dialog = page.getByRole('dialog');
    await dialog.locator('input[name=confirm]').fill('wrong');
    await dialog.getByRole('button', { name: 'Delete this workspace' }).click();
    await expect(fieldError(page, 'confirm')).resolves.toBe('Type new-name to confirm');
    await dialog.locator('input[name=confirm]').fill('new-name');
    await expect(
      flashAfter(page, () => dialog.getByRole('button', { name: 'Delete this workspace' }).click()),
    ).resolves.toEqual(notice('Workspace deleted'));
    await page.waitForURL('**/workspaces');
    const left = await db.query(`select 1 from public.workspaces where slug = 'new-name'`);
    expect(left.rowCount).toBe(0);
  },
);

test('pages carry the protective headers', async () => {
  for (const page of ['/', '/sign-in']) {
    const res = await fetch(`${app.url}${page}`);
    expect(res.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    // same-origin: nothing leaves for other sites, and script-less forms still carry their Origin.
    expect(res.headers.get('referrer-policy')).toBe('same-origin');
  }
});

test('no server secret reaches any client asset', async () => {
  const secrets = ['JWT_SECRET', 'SERVICE_ROLE_KEY', 'CRON_SECRET', 'PAYMENT_WEBHOOK_SECRET'].map(
    (n) => app.env[n]!,
  );
  // every script the pages load, as served
  const scripts = new Set<string>();
  for (const page of ['/', '/sign-in', '/sign-up', '/workspaces']) {
    const html = await (await fetch(`${app.url}${page}`)).text();
    for (const secret of secrets) expect(html).not.toContain(secret);
    for (const match of html.matchAll(/src="(\/_next\/static\/[^"]+\.js)"/g)) scripts.add(match[1]!);
  }
  expect(scripts.size).toBeGreaterThan(0);
  for (const script of scripts) {
    const body = await (await fetch(`${app.url}${script}`)).text();
    for (const secret of secrets) expect(body, script).not.toContain(secret);
  }
  // and no client chunk on disk mentions a server secret's name
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((f) => {
      const p = path.join(dir, f);
      return statSync(p).isDirectory() ? walk(p) : [p];
    });
  for (const file of walk('.next/static').filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(file, 'utf8');
    for (const name of [
      'SERVICE_ROLE_KEY',
      'JWT_SECRET',
      'CRON_SECRET',
      'PAYMENT_WEBHOOK_SECRET',
      'serviceRoleKey',
      'jwtSecret',
      'JWT_KEYS',
      'jwtKeys',
    ]) {
      expect(text.includes(name), `${file} mentions ${name}`).toBe(false);
    }
  }
});

test('a server action posted with a forged Origin is refused and changes nothing', async () => {
  // The sign-up form's own fields, as the page renders them (React's action fields included).
  const reader = await suite.browser.newPage();
  await reader.goto(`${app.url}/sign-up`);
  const fields = await reader
    .locator('form:has(input[name=email])')
    .evaluate((f) => [...new FormData(f as HTMLFormElement).entries()].map(([k, v]) => [k, String(v)]));
  await reader.close();
  expect(fields.some(([k]) => k!.startsWith('$ACTION'))).toBe(true);
  const post = (origin: string, email: string) => {
    const form = new FormData();
    for (const [key, value] of fields) form.set(key!, value!);
    form.set('email', email);
    form.set('password', 'correct horse battery');
    form.set('next', '');
    return fetch(`${app.url}/sign-up`, {
      method: 'POST',
      body: form,
      redirect: 'manual',
      headers: { origin },
    });
  };
  const forged = await post('https://evil.example', 'forged@example.com');
  expect(forged.status).toBeGreaterThanOrEqual(400);
  expect(forged.headers.get('set-cookie') ?? '').not.toContain('auth-token');
  expect((await db.query(`select 1 from auth.users where email = 'forged@example.com'`)).rowCount).toBe(0);

  const genuine = await post(new URL(app.url).origin, 'genuine@example.com');
  expect(genuine.status).toBe(303);
  const cookie = genuine.headers.get('set-cookie') ?? '';
  expect(cookie).toContain('sb-localhost-auth-token=base64-');
  expect(cookie).toMatch(/HttpOnly/i);
  expect(cookie).toMatch(/SameSite=lax/i);
  expect((await db.query(`select 1 from auth.users where email = 'genuine@example.com'`)).rowCount).toBe(1);
});
