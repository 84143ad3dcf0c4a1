// The real process (src/server/main.ts): starts against DATABASE_URL and serves health and
// readiness; a production start with missing or invalid configuration stops, naming the problem.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, expect, test } from 'vitest';
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

test('starts on DATABASE_URL and serves liveness and readiness; stops cleanly on SIGTERM', async () => {
  const port = await freePort();
  const proc = start({
    DATABASE_URL: await createTestDatabase(),
    PORT: String(port),
    HOST: '127.0.0.1',
    ...secrets(),
  });
  let ready: Response | undefined;
  for (let i = 0; i < 100 && !ready; i++) {
    ready = await fetch(`http://127.0.0.1:${port}/api/health/ready`).catch(() => undefined);
    if (!ready) await new Promise((r) => setTimeout(r, 100));
  }
  expect(ready?.status).toBe(200);
  expect(await ready!.json()).toEqual({ status: 'ready', database: 'ok' });
  expect((await fetch(`http://127.0.0.1:${port}/api/health`)).status).toBe(200);
  expect(proc.output().stdout).toContain(`Tenantry is running at http://localhost:${port}`);
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
