// Domain auto-join in the web app, in Chromium on the real process with a local DNS server as its
// resolver: an owner adds a free-mail domain (refused under the field), their own domain (verified
// by their address) and another (verified with "Check now" once its TXT record is published), and
// chooses who may join; a person on the domain asks to join from their workspaces page, an admin
// approves on the members page and the requester is mailed; a person on the other domain joins with
// one click. Every look (light and dark, desktop and 390 px) is axe clean, fits, and is photographed.
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { inEveryLook, seriousViolations, shoot, sidewaysOverflow } from '../support/browser-checks.js';
import {
  createWorkspaceInBrowser,
  fieldError,
  signUpInBrowser,
  startBrowserSuite,
  type BrowserSuite,
} from '../support/browser-suite.js';
import { startDnsServer, type DnsServer } from '../support/dns-server.js';

let suite: BrowserSuite;
let dns: DnsServer;
const run = randomUUID().slice(0, 8);
const company = `acme-${run}.com`;
const other = `globex-${run}.com`;

beforeAll(async () => {
  dns = await startDnsServer();
  suite = await startBrowserSuite({ DOMAIN_VERIFICATION_DNS_SERVER: dns.address });
}, 300_000);
afterAll(async () => {
  await suite?.stop();
  await dns?.close();
});

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

test(
  'domains are claimed and verified, people ask to join or join, admins approve',
  { timeout: 240_000 },
  async () => {
    const owner = await signUpInBrowser(suite, `boss@${company}`);
    const slug = await createWorkspaceInBrowser(suite, owner, 'Acme Works');
    await owner.goto(url(`/w/${slug}/settings`));
    await owner.getByRole('link', { name: 'Manage domains' }).click();
    await owner.waitForURL(`**/w/${slug}/settings/domains`);
    await owner.getByText('No domains yet.').waitFor();

    // A shared mail service is refused under the field, and nothing is added.
    await owner.getByRole('textbox', { name: 'Domain', exact: true }).fill('gmail.com');
    await owner.getByRole('button', { name: 'Add domain' }).click();
    expect(await fieldError(owner, 'domain')).toMatch(/shared mail service/);
    expect(
      (await suite.db.query('select count(*)::int as n from internal.workspace_domains')).rows[0],
    ).toEqual({
      n: 0,
    });

    // The owner's own domain (typed in capitals) is verified by their address at once.
    await owner.getByRole('textbox', { name: 'Domain', exact: true }).fill(company.toUpperCase());
    await owner.getByRole('button', { name: 'Add domain' }).click();
    const mine = owner.locator(`[data-domain="${company}"]`);
    await mine.getByText('verified', { exact: true }).waitFor();

    // The other needs its TXT record: not there yet, then published and checked.
    await owner.getByRole('textbox', { name: 'Domain', exact: true }).fill(other);
    await owner.getByRole('button', { name: 'Add domain' }).click();
    const theirs = owner.locator(`[data-domain="${other}"]`);
    await theirs.getByText('not verified').waitFor();
    const value = ((await theirs.locator('code').nth(1).textContent()) ?? '').trim();
    expect(value).toMatch(/^tenantry-verification=[0-9a-f]{32}$/);
    expect(await theirs.locator('code').first().textContent()).toBe(`_tenantry.${other}`);
    dns.txt.set(`_tenantry.${other}`, []);
    dns.txt.set(other, []);
    await theirs.getByRole('button', { name: 'Check now' }).click();
    await owner.getByText(`No record found yet at _tenantry.${other}`).first().waitFor();
    dns.txt.set(`_tenantry.${other}`, [value]);
    await theirs.getByRole('button', { name: 'Check now' }).click();
    await theirs.getByText('verified', { exact: true }).waitFor();

    // Who may join: ask for the owner's domain, one click (as viewer) for the other.
    await mine.getByLabel(`People with an address on ${company}`).selectOption('request');
    await mine.getByRole('button', { name: 'Save' }).click();
    await owner.getByText(`Joining by ${company} saved`).first().waitFor();
    await owner
      .locator(`[data-domain="${other}"]`)
      .getByLabel(`People with an address on ${other}`)
      .selectOption('auto_join');
    await owner.locator(`[data-domain="${other}"]`).getByLabel('As').selectOption('viewer');
    await owner.locator(`[data-domain="${other}"]`).getByRole('button', { name: 'Save' }).click();
    await owner.getByText(`Joining by ${other} saved`).first().waitFor();
    await checkEveryLook(owner, `/w/${slug}/settings/domains`, 'domains', (p) =>
      p.locator(`[data-domain="${other}"]`).getByText('verified', { exact: true }).waitFor(),
    );

    // Someone on the owner's domain asks to join from their workspaces page.
    const ann = await signUpInBrowser(suite, `ann@${company}`);
    const offer = ann.locator('[data-joinable="Acme Works"]');
    await offer.waitFor();
    await offer.getByRole('button', { name: 'Ask to join Acme Works' }).click();
    await offer.getByText('waiting for approval').waitFor();
    await checkEveryLook(ann, '/workspaces', 'joinable-workspaces', (p) =>
      p.locator('[data-joinable="Acme Works"]').getByText('waiting for approval').waitFor(),
    );

    // Someone at a look-alike domain sees nothing to join.
    const eve = await signUpInBrowser(suite, `eve@${company}.evil.com`);
    await eve.getByRole('heading', { name: 'Your workspaces' }).waitFor();
    expect(await eve.getByText('Workspaces you can join').count()).toBe(0);

    // The owner approves on the members page; Ann is a member and is told by e-mail.
    await owner.goto(url(`/w/${slug}/members`));
    const request = owner.locator(`[data-join-request="ann@${company}"]`);
    await request.waitFor();
    await checkEveryLook(owner, `/w/${slug}/members`, 'join-requests', (p) =>
      p.locator(`[data-join-request="ann@${company}"]`).waitFor(),
    );
    await request.getByRole('button', { name: /^Approve/ }).click();
    await owner.getByText('Request approved: they are a member now').first().waitFor();
    const role = await suite.db.query<{ role: string }>(
      `select m.role from public.workspace_members m join auth.users u on u.id = m.user_id
     where u.email = $1`,
      [`ann@${company}`],
    );
    expect(role.rows).toEqual([{ role: 'member' }]);
    const mail = await suite.db.query<{ subject: string }>(
      `select subject from internal.outbox where to_address = $1 and kind = 'join_request_answered'`,
      [`ann@${company}`],
    );
    expect(mail.rows).toEqual([{ subject: 'You have joined Acme Works' }]);

    // Someone on the other domain joins with one click, as a viewer.
    const ben = await signUpInBrowser(suite, `ben@${other}`);
    await ben
      .locator('[data-joinable="Acme Works"]')
      .getByRole('button', { name: 'Join Acme Works' })
      .click();
    await ben.waitForURL(`**/w/${slug}`);
    const benRole = await suite.db.query<{ role: string }>(
      `select m.role from public.workspace_members m join auth.users u on u.id = m.user_id where u.email = $1`,
      [`ben@${other}`],
    );
    expect(benRole.rows).toEqual([{ role: 'viewer' }]);
  },
);
