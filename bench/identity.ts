// Identity benchmarks: refresh-grant throughput against a bare signed-JWT round trip on the same
// server, and password sign-in throughput against the bare argon2 verify rate.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { hashPassword, verifyPassword } from '../src/server/identity/passwords.js';
import type { BenchDatabase } from './support/database.js';
import { request, runLoad } from './support/load.js';
import { row, type BenchRow } from './support/report.js';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = 32;

async function startServer(
  databaseUrl: string,
  apiKey: string,
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/identity-server.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      JWT_SECRET: randomBytes(32).toString('hex'),
      PROJECT_API_KEY: apiKey,
      SERVICE_ROLE_KEY: randomBytes(24).toString('hex'),
      PAYMENT_WEBHOOK_SECRET: 'whsec_' + randomBytes(16).toString('hex'),
      CRON_SECRET: randomBytes(24).toString('hex'),
      AUTH_AUTOCONFIRM: 'true',
      // The benchmark measures throughput, not the limiter: lift the limits far out of the way.
      RATE_LIMIT_SIGNIN_PER_EMAIL: '100000000',
      RATE_LIMIT_SIGNIN_PER_ADDRESS: '100000000',
      RATE_LIMIT_REFRESH_PER_SESSION: '100000000',
      RATE_LIMIT_SIGNUP_PER_ADDRESS: '100000000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  const port = /listening (\d+)/.exec(chunk.toString())?.[1];
  if (!port) throw new Error(`benchmark server did not start: ${chunk.toString()}`);
  return { url: `http://127.0.0.1:${port}`, child };
}

export async function identityBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const apiKey = randomBytes(24).toString('hex');
  const { url, child } = await startServer(database.url, apiKey);
  const headers = { apikey: apiKey, 'content-type': 'application/json' };
  try {
    // One user and one session chain per worker.
    const password = 'benchmark password';
    const users = await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, i) => {
        const email = `bench${i}-${Date.now()}@example.com`;
        const res = await request(
          `${url}/auth/v1/signup`,
          'POST',
          headers,
          JSON.stringify({ email, password }),
        );
        const body = JSON.parse(res.body) as { refresh_token: string; user: { id: string } };
        return { email, refreshToken: body.refresh_token, id: body.user.id };
      }),
    );

    const jwt = await runLoad({
      durationMs: DURATION_MS,
      concurrency: CONCURRENCY,
      operation: async (w) =>
        (await request(`${url}/bench/jwt`, 'POST', headers, JSON.stringify({ sub: users[w]!.id }))).status ===
        200,
    });
    const refresh = await runLoad({
      durationMs: DURATION_MS,
      concurrency: CONCURRENCY,
      operation: async (w) => {
        const user = users[w]!;
        const res = await request(
          `${url}/auth/v1/token?grant_type=refresh_token`,
          'POST',
          headers,
          JSON.stringify({ refresh_token: user.refreshToken }),
        );
        if (res.status !== 200) return false;
        user.refreshToken = (JSON.parse(res.body) as { refresh_token: string }).refresh_token;
        return true;
      },
    });
    const signIn = await runLoad({
      durationMs: DURATION_MS,
      concurrency: CONCURRENCY,
      operation: async (w) =>
        (
          await request(
            `${url}/auth/v1/token?grant_type=password`,
            'POST',
            headers,
            JSON.stringify({ email: users[w]!.email, password }),
          )
        ).status === 200,
    });
    // Reference: the password-hash verify alone, same concurrency, in this process (no HTTP, no SQL).
    const stored = await hashPassword(password);
    const verify = await runLoad({
      durationMs: DURATION_MS,
      concurrency: CONCURRENCY,
      operation: () => verifyPassword(stored, password),
    });

    return [
      row({
        suite: 'identity',
        measure: 'refresh grant throughput',
        value: refresh.perSecond,
        reference: jwt.perSecond,
        referenceName: 'bare signed-JWT round trip',
        unit: 'req/s',
        note: `p50 ${refresh.p50.toFixed(1)} ms, p99 ${refresh.p99.toFixed(1)} ms, errors ${refresh.errors}; reference errors ${jwt.errors}`,
      }),
      row({
        suite: 'identity',
        measure: 'password sign-in throughput',
        value: signIn.perSecond,
        reference: verify.perSecond,
        referenceName: 'bare argon2id verify',
        unit: 'ops/s',
        note: `p50 ${signIn.p50.toFixed(1)} ms, p99 ${signIn.p99.toFixed(1)} ms, errors ${signIn.errors}`,
      }),
    ];
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}
