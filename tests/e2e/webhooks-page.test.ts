// Outgoing webhooks in the web app, in Chromium on the real process (its own deliverer running): an
// owner adds an endpoint on /w/<slug>/settings/webhooks (a missing URL and an internal address are
// refused under the field), sees the secret once with a copy button, sends a test event that a
// real receiver verifies with standardwebhooks, replays it under the same webhook-id, turns the
// endpoint off and on, rotates the secret and deletes the endpoint (asked first). A member is told
// only admins and owners manage webhooks. Every look (light and dark, desktop and 390 px) is axe
// clean, fits the width, and is photographed.
import type { Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
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
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

let suite: BrowserSuite;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
  // The receiver is on this machine, so the operator allows private destinations for the suite.
  suite = await startBrowserSuite({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_RETRY_SCHEDULE: '1,2' });
}, 300_000);
afterAll(async () => {
  await suite?.stop();
  await receiver?.close();
});

const url = (path: string) => `${suite.app.url}${path}`;

async function waitFor(check: () => boolean | Promise<boolean>, what: string, limitMs = 20_000) {
  const until = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

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
  'an owner adds an endpoint, tests, replays, turns it off and on, rotates and deletes it',
  { timeout: 240_000 },
  async () => {
    const page = await signUpInBrowser(suite, `hooks-owner-${Date.now()}@example.com`);
    const slug = await createWorkspaceInBrowser(suite, page, 'Hook Works');
    await page.goto(url(`/w/${slug}/settings`));
    await page.getByRole('link', { name: 'Manage webhooks' }).click();
    await page.waitForURL(`**/w/${slug}/settings/webhooks`);
    await page.getByText('No endpoints yet.').waitFor();

    await page.getByRole('button', { name: 'Add endpoint' }).click();
    expect(await fieldError(page, 'url')).toBe('Give the URL that receives events');

    // An internal address is refused under the field when the operator has not allowed it.
    await suite.db.query('update internal.webhook_settings set allow_private_destinations = false');
    await page.getByLabel('Endpoint URL').fill('http://169.254.169.254/latest/meta-data');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByText(/cannot be sent to 169\.254\.169\.254/).waitFor();
    expect(await fieldError(page, 'url')).toMatch(/cannot be sent to 169\.254\.169\.254/);
    await shoot(page, 'webhook-refused-address');
    await suite.db.query('update internal.webhook_settings set allow_private_destinations = true');
    await page.getByLabel('Endpoint URL').fill(receiver.url());
    await page.getByLabel('Description').fill('Our relay');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const shown = page.getByLabel('Signing secret');
    await shown.waitFor();
    const secret = ((await shown.textContent()) ?? '').trim();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('button', { name: 'Copy secret' }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await shoot(page, 'webhook-created');
    await page.getByRole('link', { name: 'I have saved it' }).click();
    const card = page.locator(`[data-webhook-endpoint="${receiver.url()}"]`);
    await card.waitFor();
    expect(await page.content()).not.toContain(secret.slice(6));

    await card.getByRole('button', { name: `Send test event to ${receiver.url()}` }).click();
    await page.getByText('Test event queued').waitFor();
    await waitFor(() => receiver.received.length === 1, 'the test event');
    const first = receiver.received[0]!;
    const verified = new Webhook(secret).verify(first.body, first.headers as Record<string, string>);
    expect(verified).toMatchObject({ type: 'webhook.test' });

    await waitFor(async () => {
      await page.reload();
      return (
        (await card.locator('[data-webhook-delivery="webhook.test"]').getByText('delivered').count()) === 1
      );
    }, 'the delivery in the log');
    await checkEveryLook(page, `/w/${slug}/settings/webhooks`, 'webhooks', (p) =>
      p.locator('[data-webhook-delivery="webhook.test"]').waitFor(),
    );

    await card.getByRole('button', { name: 'Replay the webhook.test delivery' }).click();
    await page.getByText('Delivery queued again').waitFor();
    await waitFor(() => receiver.received.length === 2, 'the replay');
    expect(receiver.received[1]!.headers['webhook-id']).toBe(first.headers['webhook-id']);

    await card.getByText('Change events').click();
    await card
      .getByRole('form', { name: `Events sent to ${receiver.url()}` })
      .getByLabel('project.deleted')
      .check();
    await card.getByRole('button', { name: 'Save events' }).click();
    await page.getByText('Events saved').waitFor();
    await card.locator('p').getByText('project.deleted', { exact: true }).waitFor();
    await card.getByRole('button', { name: `Turn off ${receiver.url()}` }).click();
    await page.getByText('Endpoint turned off').waitFor();
    await card.getByText('off', { exact: true }).waitFor();
    await card.getByRole('button', { name: `Turn on ${receiver.url()}` }).click();
    await page.getByText('Endpoint turned on').waitFor();

    await card.getByRole('button', { name: `Rotate secret of ${receiver.url()}` }).click();
    const rotated = ((await page.getByLabel('Signing secret').textContent()) ?? '').trim();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByRole('link', { name: 'I have saved it' }).click();

    await card.getByRole('button', { name: `Delete the endpoint ${receiver.url()}` }).click();
    await page.getByRole('alertdialog').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await confirmDialog(page, 'Delete endpoint');
    await page.getByText('No endpoints yet.').waitFor();
    const audit = await suite.db.query<{ action: string }>(
      `select action from public.audit_events where target_type = 'webhook_endpoint' order by id`,
    );
    expect(audit.rows.map((r) => r.action)).toEqual([
      'webhook_endpoint.created',
      'webhook_endpoint.updated',
      'webhook_endpoint.updated',
      'webhook_endpoint.updated',
      'webhook_endpoint.secret_rotated',
      'webhook_endpoint.deleted',
    ]);

    // A member is told who manages webhooks, and gets no form.
    const member = await signUpInBrowser(suite, `hooks-member-${Date.now()}@example.com`);
    const memberId = (
      await suite.db.query<{ id: string }>(`select id from auth.users where email like 'hooks-member-%'`)
    ).rows[0]!.id;
    await suite.db.query(
      `insert into public.workspace_members (workspace_id, user_id, role)
     select id, $1, 'member' from public.workspaces where slug = $2`,
      [memberId, slug],
    );
    await member.goto(url(`/w/${slug}/settings/webhooks`));
    await member.getByText('Only admins and owners manage webhooks.').waitFor();
    expect(await member.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0);
  },
);
