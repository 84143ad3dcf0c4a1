// Benchmark support: starting a server script as a child process (so the load generator does not
// share its event loop), configured like production with throwaway secrets and lifted limits.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';

export async function startBenchServer(
  script: string,
  databaseUrl: string,
  apiKey: string,
  jwtSecret = randomBytes(32).toString('hex'),
  /** further settings; null leaves a setting at its production default */
  extraEnv: Record<string, string | null> = {},
  nodeOptions: string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  // BENCH_PROFILE=<dir>: every server writes a V8 CPU profile there when it stops (decision 0018).
  const profile = process.env.BENCH_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
    : [];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: databaseUrl,
    JWT_SECRET: jwtSecret,
    PROJECT_API_KEY: apiKey,
    SERVICE_ROLE_KEY: randomBytes(24).toString('hex'),
    PAYMENT_WEBHOOK_SECRET: 'whsec_' + randomBytes(16).toString('hex'),
    CRON_SECRET: randomBytes(24).toString('hex'),
    AUTH_AUTOCONFIRM: 'true',
    LOG_LEVEL: 'silent',
    // The benchmarks measure throughput, not the limiter: lift the limits far out of the way.
    RATE_LIMIT_SIGNIN_PER_EMAIL: '100000000',
    RATE_LIMIT_SIGNIN_PER_ADDRESS: '100000000',
    RATE_LIMIT_REFRESH_PER_SESSION: '100000000',
    RATE_LIMIT_SIGNUP_PER_ADDRESS: '100000000',
    // One caller may run as many data-API requests at once as the load generator sends (the
    // fair share per caller, 4 by default, would otherwise be what the list benchmark measures).
    DATA_API_CALLER_CONCURRENCY: '1000',
    // Every load generator connects from one address, which would otherwise share 8.
    DATA_API_ADDRESS_CONCURRENCY: '1000',
    // Every sign-in comes from one address, one caller of the password-hash queue.
    PASSWORD_HASHES_PER_CALLER: '10000',
  };
  for (const [name, value] of Object.entries(extraEnv)) {
    if (value === null) delete env[name];
    else env[name] = value;
  }
  const child = spawn(process.execPath, [...profile, ...nodeOptions, '--import', 'tsx', script], {
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  const port = /listening (\d+)/.exec(chunk.toString())?.[1];
  if (!port) throw new Error(`benchmark server ${script} did not start: ${chunk.toString()}`);
  return { url: `http://127.0.0.1:${port}`, child };
}

export async function stopBenchServer(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await once(child, 'exit');
}
