// Test support: the whole service as `npm start` runs it (src/server/main.ts: platform APIs and
// the Next.js build behind one port) on a fresh migrated database. The build itself is made once
// per run by the global setup.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { createTestDatabase, randomKey } from './server.js';

export interface AppProcess {
  url: string;
  env: Record<string, string>;
  /** the server process's id (its descriptors are in /proc/<pid>/fd) */
  pid: number;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export async function startApp(extraEnv: Record<string, string> = {}): Promise<AppProcess> {
  const port = await freePort();
  const url = `http://localhost:${port}`;
  const env: Record<string, string> = {
    DATABASE_URL: await createTestDatabase(),
    JWT_SECRET: randomKey(),
    PROJECT_API_KEY: randomKey('anon_'),
    SERVICE_ROLE_KEY: randomKey('service_'),
    PAYMENT_WEBHOOK_SECRET: randomKey('whsec_'),
    CRON_SECRET: randomKey(),
    AUTH_AUTOCONFIRM: 'true',
    SCHEDULER: 'off',
    PORT: String(port),
    HOST: '127.0.0.1',
    APP_URL: url,
    // Production refuses to start without a way to send mail; suites that test mail pass SMTP_URL.
    ...(extraEnv.SMTP_URL ? {} : { MAIL_DELIVERY: 'outbox' }),
    LOG_LEVEL: 'warn',
    ...extraEnv,
  };
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/server/main.ts'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  for (let i = 0; i < 300; i++) {
    const ok = await fetch(`${url}/api/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (child.exitCode !== null) throw new Error(`the app exited with code ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    env,
    pid: child.pid!,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    },
  };
}
