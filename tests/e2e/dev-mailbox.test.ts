// Local mode as `npm start` runs it (embedded PostgreSQL, generated secrets): it listens on
// loopback only unless HOST says otherwise, and even when it listens on every address its
// development mailbox (every tenant's invitation links) is served only to this machine. A remote
// browser gets 404, whatever X-Forwarded-For it sends, and also when it reaches the mailbox as
// the redirect target of a server action, which Next.js renders by requesting it from itself.
// There, each e-mail's HTML part is previewed in a sandboxed frame beside its text part.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { launchBrowser } from '../support/browser.js';
import {
  DESKTOP,
  PHONE,
  seriousViolations,
  shoot,
  sidewaysOverflow,
  themedContext,
} from '../support/browser-checks.js';

const screenshots = 'test-results/screenshots';
let dataDir: string;
let port: number;
let browser: Browser;
let running: ChildProcess | undefined;

/** An address of this machine that is not loopback, so a connection to it is not from loopback. */
function externalAddress(): string {
  const found = () =>
    Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.address.startsWith('127.'));
  // A machine with loopback alone (an isolated CI sandbox) gets an address from the range kept
  // for benchmarking networks (RFC 2544) on its loopback device; that needs root, which CI has.
  if (!found()) execFileSync('ip', ['addr', 'add', '198.18.0.1/32', 'dev', 'lo']);
  const address = found()?.address;
  if (!address) throw new Error('this test needs a network address besides loopback');
  return address;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

/** Starts the process in local mode (no DATABASE_URL) on the shared data folder. */
async function startLocal(extra: Record<string, string> = {}): Promise<void> {
  await stopLocal(); // one at a time, even when an earlier test failed half-way
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    DATA_DIR: dataDir,
    SCHEDULER: 'off',
    LOG_LEVEL: 'warn',
    ...extra,
  };
  for (const name of ['DATABASE_URL', 'HOST', 'APP_URL', 'AUTH_URL', 'SMTP_URL', 'TRUST_PROXY']) {
    if (!(name in extra)) delete env[name];
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server/main.ts'], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  running = child;
  for (let i = 0; i < 600; i++) {
    const ok = await fetch(`http://127.0.0.1:${port}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (child.exitCode !== null) throw new Error(`the app exited with code ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the app did not start');
}

async function stopLocal(): Promise<void> {
  const child = running;
  running = undefined;
  if (!child || child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
}

beforeAll(async () => {
  mkdirSync(screenshots, { recursive: true });
  dataDir = mkdtempSync(path.join(tmpdir(), 'tenantry-local-'));
  // When tests run as root the embedded cluster runs as 'postgres', which must reach this folder.
  chmodSync(dataDir, 0o755);
  port = await freePort();
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await stopLocal();
  await browser?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

test(
  'by default local mode listens on loopback only, and serves the mailbox there',
  { timeout: 300_000 },
  async () => {
    await startLocal();
    const local = await fetch(`http://127.0.0.1:${port}/dev/mailbox`);
    expect(local.status).toBe(200);
    const text = await local.text();
    expect(text).toContain('Development mailbox');
    // Nothing has been sent yet: said in words, not as "the newest 0 messages".
    expect(text).toContain('The outbox is empty.');
    expect(text).not.toMatch(/\b0 messages\b/);
    await expect(fetch(`http://${externalAddress()}:${port}/api/health`)).rejects.toThrow();
    await stopLocal();
  },
);

test(
  'listening on every address, the mailbox is still for this machine only',
  { timeout: 300_000 },
  async () => {
    await startLocal({ HOST: '0.0.0.0' });
    const local = `http://127.0.0.1:${port}`;
    const remote = `http://${externalAddress()}:${port}`;
    const { PROJECT_API_KEY: key } = JSON.parse(
      readFileSync(path.join(dataDir, 'dev-secrets.json'), 'utf8'),
    ) as {
      PROJECT_API_KEY: string;
    };

    // Someone invites a colleague: the invitation link lands in the outbox.
    const signUp = await fetch(`${local}/auth/v1/signup`, {
      method: 'POST',
      headers: { apikey: key, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'owner@example.com', password: 'correct horse battery' }),
    });
    const { access_token: token } = (await signUp.json()) as { access_token: string };
    const rpc = (name: string, body: unknown) =>
      fetch(`${local}/rest/v1/rpc/${name}`, {
        method: 'POST',
        headers: { apikey: key, authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<{ id: string }>);
    const ws = await rpc('create_workspace', { name: 'Secret Plans' });
    await rpc('invite_member', { workspace_id: ws.id, email: 'colleague@example.com', role: 'member' });

    const mine = await fetch(`${local}/dev/mailbox`);
    expect(mine.status).toBe(200);
    await expect(mine.text()).resolves.toContain('colleague@example.com');

    // On a phone, long invitation links wrap: the mailbox never scrolls sideways; and it passes axe.
    for (const theme of ['light', 'dark'] as const) {
      for (const [device, size] of [
        ['phone', PHONE],
        ['desktop', DESKTOP],
      ] as const) {
        const context = await themedContext(browser, { theme, size, url: local });
        const page = await context.newPage();
        await page.goto(`${local}/dev/mailbox`);
        await expect(page.textContent('main')).resolves.toContain('colleague@example.com');
        // The invitation's HTML part, as a mail client shows it: in a frame that runs no script,
        // with the logo inline and the button to accept; its text part beside it (under it on a phone).
        const frame = page.locator('iframe[title^="HTML part of"]').first();
        await expect(frame.getAttribute('sandbox')).resolves.toBe('');
        const inside = page.frameLocator('iframe[title^="HTML part of"]').first();
        await inside.getByRole('link', { name: 'Accept the invitation' }).waitFor();
        await expect(inside.locator('a.mail-button').getAttribute('href')).resolves.toContain(
          '/invitations/accept?token=',
        );
        const logo = inside.getByRole('img', { name: 'Tenantry' });
        await expect(logo.getAttribute('src')).resolves.toMatch(/^data:image\/png;base64,/);
        const logoBox = await logo.boundingBox();
        expect(logoBox?.width, 'the logo is drawn').toBe(40);
        const framed = await frame.boundingBox();
        const text = await page.locator('section[aria-label="Text part"]').first().boundingBox();
        if (device === 'desktop') expect(text!.x).toBeGreaterThan(framed!.x + framed!.width - 1);
        else expect(text!.y).toBeGreaterThan(framed!.y + framed!.height - 1);
        expect((await sidewaysOverflow(page)).by, `${theme} ${device}`).toBe(0);
        expect(await seriousViolations(page), `${theme} ${device}`).toEqual([]);
        await shoot(page, `dev-mailbox-${theme}-${device}`);
        await context.close();
      }
    }

    // A reader whose system is dark gets the e-mail's dark palette (clients honouring it do the same).
    {
      const context = await themedContext(browser, {
        theme: 'dark',
        scheme: 'dark',
        size: PHONE,
        url: local,
      });
      const page = await context.newPage();
      await page.goto(`${local}/dev/mailbox`);
      const mail = page.frameLocator('iframe[title^="HTML part of"]').first();
      const card = mail.locator('.mail-card');
      // the page around the card too, or the product's name would be light on light
      await expect(
        mail
          .locator('body > table > tbody > tr > td')
          .first()
          .evaluate((el) => getComputedStyle(el).backgroundColor),
      ).resolves.toBe('rgb(15, 23, 42)');
      await expect(card.evaluate((el) => getComputedStyle(el).backgroundColor)).resolves.toBe(
        'rgb(30, 41, 59)',
      );
      await shoot(page, 'dev-mailbox-email-dark-scheme-phone');
      await context.close();
    }

    // From another machine: not found, whatever the headers claim.
    const forged: Record<string, string>[] = [
      {},
      { 'x-forwarded-for': '127.0.0.1' },
      { 'x-real-ip': '127.0.0.1', forwarded: 'for=127.0.0.1' },
      { 'x-tenantry-client-address': 'AAAA 127.0.0.1 127.0.0.1' },
    ];
    for (const headers of forged) {
      const res = await fetch(`${remote}/dev/mailbox`, { headers });
      expect(res.status, JSON.stringify(headers)).toBe(404);
      await expect(res.text()).resolves.not.toContain('colleague@example.com');
    }

    // Nor as where sign-in sends a remote browser (rendered by the server requesting it from itself).
    const context = await browser.newContext();
    context.setDefaultTimeout(15_000);
    const page = await context.newPage();
    await page.goto(`${remote}/sign-in?next=${encodeURIComponent('/dev/mailbox')}`);
    await page.fill('input[name=email]', 'owner@example.com');
    await page.fill('input[name=password]', 'correct horse battery');
    await page.click('button[type=submit]');
    await page.waitForURL('**/dev/mailbox');
    await expect(page.textContent('h1')).resolves.toBe('Page not found');
    await expect(page.innerText('body')).resolves.not.toContain('colleague@example.com');
    await page.screenshot({ path: `${screenshots}/dev-mailbox-remote.png` });
    await page.reload();
    await expect(page.textContent('h1')).resolves.toBe('Page not found');
    await context.close();
    await stopLocal();
  },
);
