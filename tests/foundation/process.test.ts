// The real process (src/server/main.ts): starts against DATABASE_URL and serves health and
// readiness; a production start with missing or invalid configuration stops, naming the problem;
// and the rule that decides when `npm start` rebuilds the web app.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { webBuildIsStale } from '../../src/server/web.js';
import { createTestDatabase, randomKey } from '../support/server.js';

const children: ReturnType<typeof spawn>[] = [];
afterAll(() => children.forEach((c) => c.kill('SIGKILL')));

function start(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server/main.ts'], {
    env: { ...process.env, SKIP_WEB: '1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const secrets = () => ({
  JWT_SECRET: randomKey(),
  PROJECT_API_KEY: randomKey('anon_'),
  SERVICE_ROLE_KEY: randomKey('service_'),
  PAYMENT_WEBHOOK_SECRET: randomKey('whsec_'),
  CRON_SECRET: randomKey(),
});

/** What production needs besides its secrets: a public address and a way to send mail. */
const deployment = (port: number) => ({
  APP_URL: `http://localhost:${port}`,
  MAIL_DELIVERY: 'outbox',
});

test('starts on DATABASE_URL and serves liveness and readiness; stops cleanly on SIGTERM', async () => {
  const port = await freePort();
  const proc = start({
    DATABASE_URL: await createTestDatabase(),
    PORT: String(port),
    HOST: '127.0.0.1',
    ...secrets(),
    ...deployment(port),
  });
  let ready: Response | undefined;
  for (let i = 0; i < 100 && !ready; i++) {
    ready = await fetch(`http://127.0.0.1:${port}/api/health/ready`).catch(() => undefined);
    if (!ready) await new Promise((r) => setTimeout(r, 100));
  }
  expect(ready?.status).toBe(200);
  // Mail is reported beside the database (an outbox-only install judges no backlog), and whether
  // payments are set up (for the operator, never on a customer's page).
  expect(await ready!.json()).toEqual({
    status: 'ready',
    database: 'ok',
    billing: 'not configured',
    mail: {
      delivery: 'outbox',
      unsent: 0,
      oldest_unsent_seconds: 0,
      retrying: 0,
      failed_last_day: 0,
      last_error: null,
      degraded: false,
    },
  });
  expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200);
  const { stdout } = proc.output();
  expect(stdout).toContain(`Tenantry is running at http://localhost:${port}`);
  expect(stdout).toContain('off (SKIP_WEB=1)');
  expect(stdout).not.toContain('building the web app');
  proc.child.kill('SIGTERM');
  expect(await proc.exited).toBe(0);
}, 30_000);

test('production mode with missing secrets exits, naming each one', async () => {
  const proc = start({ DATABASE_URL: 'postgres://x@127.0.0.1:1/none', JWT_SECRET: randomKey() });
  expect(await proc.exited).toBe(1);
  const { stderr } = proc.output();
  for (const name of ['PROJECT_API_KEY', 'SERVICE_ROLE_KEY', 'PAYMENT_WEBHOOK_SECRET', 'CRON_SECRET']) {
    expect(stderr).toContain(name);
  }
}, 30_000);

test('an invalid value exits, naming the variable', async () => {
  const proc = start({ DATABASE_URL: 'postgres://x@127.0.0.1:1/none', ...secrets(), PORT: 'abc' });
  expect(await proc.exited).toBe(1);
  expect(proc.output().stderr).toContain('PORT');
}, 30_000);

test('production refuses to start where it would fail silently later: no mail, no public address, plans without a key', async () => {
  const proc = start({
    DATABASE_URL: 'postgres://x@127.0.0.1:1/none',
    ...secrets(),
    BILLING_PLANS: JSON.stringify([{ id: 'pro', name: 'Pro', priceId: 'price_123' }]),
  });
  expect(await proc.exited).toBe(1);
  const { stderr } = proc.output();
  for (const name of ['SMTP_URL', 'MAIL_DELIVERY=outbox', 'APP_URL', 'STRIPE_SECRET_KEY'])
    expect(stderr).toContain(name);
  // Named together, before the database is even tried.
  expect(stderr).not.toContain('ECONNREFUSED');

  const smtpWithoutUrl = start({
    DATABASE_URL: 'postgres://x@127.0.0.1:1/none',
    ...secrets(),
    APP_URL: 'https://app.example.com',
    MAIL_DELIVERY: 'smtp',
  });
  expect(await smtpWithoutUrl.exited).toBe(1);
  expect(smtpWithoutUrl.output().stderr).toContain('MAIL_DELIVERY=smtp needs SMTP_URL');
}, 30_000);

test('a port already in use stops the start with a non-zero exit', async () => {
  const blocker = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => blocker.once('listening', resolve));
  const port = (blocker.address() as { port: number }).port;
  try {
    const proc = start({
      DATABASE_URL: await createTestDatabase(),
      PORT: String(port),
      HOST: '127.0.0.1',
      ...secrets(),
      ...deployment(port),
    });
    expect(await proc.exited).toBe(1);
    expect(proc.output().stderr).toContain('EADDRINUSE');
  } finally {
    blocker.close();
  }
}, 30_000);

describe('when npm start rebuilds the web app', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, seconds));
  const touch = (file: string, seconds: number) => utimesSync(file, at(seconds), at(seconds));

  /** A project whose files have the given ages (seconds) and whose folders are all older. */
  function project(files: Record<string, number>) {
    const dir = mkdtempSync(path.join(tmpdir(), 'tenantry-web-'));
    dirs.push(dir);
    for (const file of Object.keys(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), 'x');
    }
    for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (entry.isDirectory()) touch(path.join(entry.parentPath, entry.name), 0);
    }
    for (const [file, seconds] of Object.entries(files)) touch(path.join(dir, file), seconds);
    return dir;
  }

  const sources = { 'src/app/page.tsx': 10, 'src/server/config.ts': 10, 'next.config.ts': 10 };

  test('without a build, it builds', () => {
    expect(webBuildIsStale(project(sources))).toBe(true);
  });

  test('a build newer than every source is reused', () => {
    expect(webBuildIsStale(project({ ...sources, '.next/BUILD_ID': 20 }))).toBe(false);
  });

  test('a changed page, server module or config file makes it stale', () => {
    for (const file of Object.keys(sources)) {
      const dir = project({ ...sources, '.next/BUILD_ID': 20 });
      touch(path.join(dir, file), 30);
      expect(webBuildIsStale(dir), file).toBe(true);
    }
  });

  test('a deleted source makes it stale', () => {
    const dir = project({ ...sources, 'src/app/old/page.tsx': 10, '.next/BUILD_ID': 20 });
    rmSync(path.join(dir, 'src/app/old'), { recursive: true });
    expect(webBuildIsStale(dir)).toBe(true);
  });
});
