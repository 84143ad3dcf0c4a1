// The team journey in a real browser: an owner invites a second user by e-mail, the invitee
// follows the link from the mail, signs up and lands in the workspace; the owner changes the
// role and then removes the member, who can no longer open the workspace. A member's admin-only
// attempt is refused, and nobody opens another tenant's pages by URL.
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { AppProcess } from '../support/app-process.js';
import {
  confirmDialog,
  newPage,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';
import { flashAfter } from '../support/flash.js';

let suite: BrowserSuite;
let app: AppProcess;
let db: pg.Client;
const screenshots = 'test-results/screenshots';

beforeAll(async () => {
  suite = await startBrowserSuite();
  ({ app, db } = suite);
}, 300_000);
afterAll(async () => suite?.stop());

async function createWorkspace(page: Page, name: string): Promise<string> {
  await page.goto(`${app.url}/workspaces`);
  await page.fill('input[name=name]', name);
  await expect(flashAfter(page, () => page.click('text=Create workspace'))).resolves.toEqual(
    notice(`Workspace ${name} created`),
  );
  await page.waitForURL((url) => url.pathname.startsWith('/w/'));
  return new URL(page.url()).pathname.split('/')[2]!;
}

const notice = (text: string) => ({ kind: 'notice', text });

test('invite by e-mail, accept from the link, change role, remove', { timeout: 120_000 }, async () => {
  const owner = await signUpInBrowser(suite, 'owner@example.com');
  const slug = await createWorkspace(owner, 'Lovelace Labs');

  await owner.goto(`${app.url}/w/${slug}/members`);
  await owner.fill('input[name=email]', 'grace@example.com');
  await owner.selectOption('select[name=role]', 'member');
  await expect(flashAfter(owner, () => owner.click('text=Send invitation'))).resolves.toEqual(
    notice('Invitation sent to grace@example.com'),
  );
  await expect(owner.textContent('ul[aria-label="Pending invitations"]')).resolves.toContain(
    'grace@example.com',
  );
  await owner.screenshot({ path: `${screenshots}/members.png` });

  const mail = await db.query<{ text_body: string }>(
    `select text_body from internal.outbox where kind = 'invitation' and to_address = 'grace@example.com'`,
  );
  const link = /(https?:\/\/\S+\/invitations\/accept\?token=\w+)/.exec(mail.rows[0]!.text_body)![1]!;
  expect(link.startsWith(app.url)).toBe(true);

  // The invitee is signed out: the link leads through sign-up and back to the invitation.
  const grace = await newPage(suite.browser);
  await grace.goto(link);
  // The page says what the invitation is before anyone acts on it.
  await expect(grace.textContent('h1')).resolves.toBe('Join Lovelace Labs');
  await expect(grace.textContent('[data-invitation-state=pending]')).resolves.toMatch(
    /owner@example\.com invited grace@example\.com to join as member/,
  );
  await grace.getByRole('link', { name: 'Create an account' }).click();
  // The sign-up form has the invited address filled in.
  expect(await grace.inputValue('input[name=email]')).toBe('grace@example.com');
  await grace.fill('input[name=password]', 'correct horse battery');
  await grace.click('button[type=submit]');
  await grace.waitForURL('**/invitations/accept?token=*');
  await expect(flashAfter(grace, () => grace.click('text=Accept invitation'))).resolves.toEqual(
    notice('Welcome to the workspace'),
  );
  await grace.waitForURL(`**/w/${slug}`);
  // The heading's name (the workspace's mark beside it is decorative).
  await expect(
    grace.getByRole('heading', { level: 1, name: 'Lovelace Labs', exact: true }).count(),
  ).resolves.toBe(1);
  await grace.screenshot({ path: `${screenshots}/workspace.png` });

  // A member is refused an admin-only action, shown as such.
  await grace.goto(`${app.url}/w/${slug}/members`);
  expect(await grace.locator('text=Send invitation').count()).toBe(0);
  // Allowed for a member; re-join via a new invitation later.
  await grace.click('text=Leave this workspace');
  await expect(flashAfter(grace, () => confirmDialog(grace, 'Leave workspace'))).resolves.toEqual(
    notice('You left the workspace'),
  );
  await grace.waitForURL('**/workspaces');

  // Invite again, accept while signed in, then the owner promotes and removes.
  await owner.goto(`${app.url}/w/${slug}/members`);
  await owner.fill('input[name=email]', 'grace@example.com');
  await expect(flashAfter(owner, () => owner.click('text=Send invitation'))).resolves.toEqual(
    notice('Invitation sent to grace@example.com'),
  );
  const second = await db.query<{ text_body: string }>(
    `select text_body from internal.outbox where kind = 'invitation' and to_address = 'grace@example.com' order by id desc limit 1`,
  );
  await grace.goto(
    /(https?:\/\/\S+)/.exec(second.rows[0]!.text_body.split('Accept the invitation: ')[1]!)![1]!,
  );
  await expect(flashAfter(grace, () => grace.click('text=Accept invitation'))).resolves.toEqual(
    notice('Welcome to the workspace'),
  );

  await owner.goto(`${app.url}/w/${slug}/members`);
  await owner.click('[aria-label^="Role of grace@example.com"]');
  await expect(
    flashAfter(owner, () => owner.getByRole('menuitem', { name: /^admin/i }).click()),
  ).resolves.toEqual(notice('Role changed to admin'));
  const role = await db.query(
    `select m.role from public.workspace_members m join public.profiles p on p.id = m.user_id where p.email = 'grace@example.com'`,
  );
  expect(role.rows[0].role).toBe('admin');

  await owner.click('[aria-label="Remove grace@example.com"]');
  await expect(flashAfter(owner, () => confirmDialog(owner, 'Remove member'))).resolves.toEqual(
    notice('Member removed'),
  );
  await grace.goto(`${app.url}/w/${slug}`);
  await expect(grace.textContent('h1')).resolves.toBe('Page not found');
});

test(
  'a member cannot act as an admin, and nobody opens another tenant by URL',
  { timeout: 120_000 },
  async () => {
    const a = await signUpInBrowser(suite, 'alice@example.com');
    const slugA = await createWorkspace(a, 'Alice Co');
    const b = await signUpInBrowser(suite, 'bob@example.com');
    const slugB = await createWorkspace(b, 'Bob Co');

    // Bob is not in Alice Co: its pages do not exist for him.
    for (const path of [`/w/${slugA}`, `/w/${slugA}/members`]) {
      await b.goto(`${app.url}${path}`);
      await expect(b.textContent('h1')).resolves.toBe('Page not found');
    }

    // Make Bob a member of Alice Co; an admin-only action sent anyway is refused by the database.
    await db.query(
      `insert into public.workspace_members (workspace_id, user_id, role)
     select w.id, p.id, 'member' from public.workspaces w, public.profiles p where w.slug = $1 and p.email = 'bob@example.com'`,
      [slugA],
    );
    // The invite form is not offered to a member; post the invite action anyway, with Bob's
    // session cookies and the form fields of Alice's page (as a crafted request would).
    await b.goto(`${app.url}/w/${slugA}/members`);
    expect(await b.locator('text=Send invitation').count()).toBe(0);
    await a.goto(`${app.url}/w/${slugA}/members`);
    const fields = await a
      .locator('form:has(button:text("Send invitation"))')
      .evaluate((f) => [...new FormData(f as HTMLFormElement).entries()].map(([k, v]) => [k, String(v)]));
    const form = new FormData();
    for (const [key, value] of fields) form.set(key!, value!);
    form.set('email', 'mallory@example.com');
    const bobCookies = (await b.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const forged = await fetch(`${app.url}/w/${slugA}/members`, {
      method: 'POST',
      body: form,
      redirect: 'manual',
      headers: { cookie: bobCookies, origin: new URL(app.url).origin },
    });
    // Posted as a form without script, the page comes back as it was (a member's page has no
    // invite form to show the refusal in), and nothing is created.
    expect(forged.status).toBe(200);
    await expect(forged.text()).resolves.not.toContain('Invitation sent');
    const refused = await db.query(`select 1 from public.invitations where email = 'mallory@example.com'`);
    expect(refused.rowCount).toBe(0);
    expect(slugB).not.toBe(slugA);
  },
);

test(
  'used, revoked, declined, expired, replaced and wrong-account links say so when the page opens',
  { timeout: 120_000 },
  async () => {
    const owner = await signUpInBrowser(suite, 'links-owner@example.com');
    const slug = await createWorkspace(owner, 'Link Checks');
    const invite = async (email: string) => {
      await owner.goto(`${app.url}/w/${slug}/members`);
      await owner.fill('input[name=email]', email);
      await expect(flashAfter(owner, () => owner.click('text=Send invitation'))).resolves.toEqual(
        notice(`Invitation sent to ${email}`),
      );
      return latestLink(email);
    };
    const latestLink = async (email: string) => {
      const mail = await db.query<{ text_body: string }>(
        `select text_body from internal.outbox where kind = 'invitation' and to_address = $1 order by id desc limit 1`,
        [email],
      );
      return /(https?:\/\/\S+\/invitations\/accept\?token=\w+)/.exec(mail.rows[0]!.text_body)![1]!;
    };
    const late = await signUpInBrowser(suite, 'late@example.com');
    const expectState = async (link: string, state: string, title: string) => {
      await late.goto(link);
      await expect(late.getAttribute('[data-invitation-state]', 'data-invitation-state')).resolves.toBe(
        state,
      );
      await expect(late.textContent('h1')).resolves.toBe(title);
      expect(await late.getByRole('button', { name: 'Accept invitation' }).count()).toBe(0);
    };

    // A closed link says what happened to it, whoever opens it.
    const expiredLink = await invite('expired@example.com');
    await db.query(
      `update public.invitations set expires_at = now() - interval '1 minute' where email = 'expired@example.com'`,
    );
    await expectState(expiredLink, 'expired', 'This invitation has expired');
    await late.screenshot({ path: `${screenshots}/invitation-expired.png` });

    const revokedLink = await invite('revoked@example.com');
    await owner.goto(`${app.url}/w/${slug}/members`);
    await owner.click('[aria-label="Revoke the invitation for revoked@example.com"]');
    await expect(flashAfter(owner, () => confirmDialog(owner, 'Revoke invitation'))).resolves.toEqual(
      notice('Invitation revoked'),
    );
    await expectState(revokedLink, 'revoked', 'This invitation was revoked');

    // Resending replaces the link: the old one says so.
    const firstLink = await invite('resent@example.com');
    await owner.goto(`${app.url}/w/${slug}/members`);
    await expect(
      flashAfter(owner, () => owner.click('[aria-label="Resend to resent@example.com"]')),
    ).resolves.toEqual(notice('Invitation sent again with a new link'));
    expect(await latestLink('resent@example.com')).not.toBe(firstLink);
    await expectState(firstLink, 'superseded', 'This link was replaced by a newer one');

    // Declined, then used: each says so.
    const declinedLink = await invite('late@example.com');
    await late.goto(declinedLink);
    await expect(flashAfter(late, () => late.click('text=Decline'))).resolves.toEqual(
      notice('Invitation declined'),
    );
    await expectState(declinedLink, 'declined', 'This invitation was declined');
    const usedLink = await invite('late@example.com');
    await late.goto(usedLink);
    await expect(flashAfter(late, () => late.click('text=Accept invitation'))).resolves.toEqual(
      notice('Welcome to the workspace'),
    );
    await expectState(usedLink, 'accepted', 'This invitation has already been used');

    // Someone else's invitation: named as such, no Accept button; a made-up token is not valid.
    await late.goto(await invite('someone-else@example.com'));
    await expect(
      late.getAttribute('[data-invitation-state=wrong-account]', 'data-invitation-state'),
    ).resolves.toBe('wrong-account');
    expect(await late.getByRole('button', { name: 'Accept invitation' }).count()).toBe(0);
    await expectState(
      `${app.url}/invitations/accept?token=${'0'.repeat(64)}`,
      'invalid',
      'This invitation link is not valid',
    );
  },
);

test('a long invited address is shown whole on a phone, and the revoke dialog stays on screen', async () => {
  const owner = await signUpInBrowser(suite, 'long-owner@example.com');
  const slug = await createWorkspace(owner, 'Long Addresses');
  const address = `${'a-very-long-mailbox-name-for-the-finance-team'.repeat(2)}@subsidiary.example.com`;
  await owner.goto(`${app.url}/w/${slug}/members`);
  await owner.fill('input[name=email]', address);
  await flashAfter(owner, () => owner.click('text=Send invitation'));

  await owner.setViewportSize({ width: 390, height: 844 });
  await owner.reload();
  const shown = owner.locator(`[data-invitation="${address}"] [data-invitation-email]`);
  await expect(shown.textContent()).resolves.toContain(address);
  // Whole: wrapped over lines, not clipped with an ellipsis.
  const clipped = await shown.evaluate((e) => e.scrollWidth > e.clientWidth + 1);
  expect(clipped).toBe(false);
  expect(await owner.evaluate(() => document.documentElement.scrollWidth - innerWidth)).toBeLessThanOrEqual(
    0,
  );
  // Readable: the address keeps most of the row's width (the buttons go under it).
  expect((await shown.boundingBox())!.width).toBeGreaterThan(200);
  await shown.scrollIntoViewIfNeeded();
  await owner.screenshot({ path: `${screenshots}/pages/invitations-long-address-light-phone.png` });

  await owner.getByRole('button', { name: `Revoke the invitation for ${address}` }).click();
  const dialog = owner.getByRole('alertdialog');
  await dialog.waitFor();
  const box = (await dialog.boundingBox())!;
  expect(box.x).toBeGreaterThanOrEqual(0);
  expect(box.x + box.width).toBeLessThanOrEqual(390);
  const description = await dialog.evaluate((e) => e.scrollWidth - e.clientWidth);
  expect(description).toBeLessThanOrEqual(0);
  await owner.screenshot({ path: `${screenshots}/pages/revoke-long-address-light-phone.png` });
  await confirmDialog(owner, 'Revoke invitation');
  await owner.waitForSelector(`[data-invitation="${address}"]`, { state: 'detached' });
}, 90_000);

test('making someone an owner asks first, and focus comes back to their role button either way', async () => {
  const owner = await signUpInBrowser(suite, 'asks-owner@example.com');
  const slug = await createWorkspace(owner, 'Asks First');
  await signUpInBrowser(suite, 'asks-member@example.com');
  await db.query(
    `insert into public.workspace_members (workspace_id, user_id, role)
     select w.id, u.id, 'member' from public.workspaces w, auth.users u
     where w.slug = $1 and u.email = $2`,
    [slug, 'asks-member@example.com'],
  );
  const roleOf = async () =>
    (
      await db.query<{ role: string }>(
        `select m.role from public.workspace_members m join auth.users u on u.id = m.user_id
         join public.workspaces w on w.id = m.workspace_id where w.slug = $1 and u.email = $2`,
        [slug, 'asks-member@example.com'],
      )
    ).rows[0]!.role;
  await owner.goto(`${app.url}/w/${slug}/members`);
  const button = '[aria-label^="Role of asks-member@example.com"]';

  await owner.click(button);
  await owner.getByRole('menuitem', { name: /^owner/i }).click();
  const dialog = owner.getByRole('alertdialog');
  await expect(dialog.textContent()).resolves.toContain('full control');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await dialog.waitFor({ state: 'detached' });
  expect(await roleOf()).toBe('member');
  await expect(owner.evaluate(() => document.activeElement?.getAttribute('aria-label'))).resolves.toMatch(
    /^Role of asks-member@example.com/,
  );

  await owner.click(button);
  await owner.getByRole('menuitem', { name: /^owner/i }).click();
  await flashAfter(owner, () => confirmDialog(owner, 'Make owner'));
  expect(await roleOf()).toBe('owner');
}, 90_000);
