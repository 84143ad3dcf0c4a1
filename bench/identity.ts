// Identity benchmarks: refresh-grant throughput against one durable row write and a signed JWT per
// request on the same server (goal: 1,000 grants/s and 0.8 of it), and password sign-in throughput against the bare argon2 verify rate.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { startBenchServer } from './support/servers.js';
import { HashQueue, hashCallers } from '../src/server/identity/hash-queue.js';
import { createPasswordHasher } from '../src/server/identity/passwords.js';
import type { BenchDatabase } from './support/database.js';
import { compareLoads, request } from './support/load.js';
import { row, type BenchRow } from './support/report.js';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = 32;

export async function identityBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const apiKey = randomBytes(24).toString('hex');
  const { url, child } = await startBenchServer('bench/identity-server.ts', database.url, apiKey);
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

    const reference = async (w: number) =>
      (await request(`${url}/bench/jwt`, 'POST', headers, JSON.stringify({ sub: users[w]!.id }))).status ===
      200;
    const grant = async (w: number) => {
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
    };
    const { a: refresh, b: jwt } = await compareLoads({
      durationMs: DURATION_MS * 2,
      concurrency: CONCURRENCY,
      a: grant,
      b: reference,
    });
    // Reference: the password-hash verify alone, same parameters and concurrency, in this process
    // (no HTTP, no SQL), measured in slices alternating with the sign-ins.
    // As many at once as libuv runs (4 threads): the bare rate, no fair turns.
    const bare = createPasswordHasher(new HashQueue({ concurrency: 4, perCaller: 1e9, maxQueued: 1e9 }));
    const stored = await bare.hash(hashCallers.service, password);
    const { a: signIn, b: verify } = await compareLoads({
      durationMs: DURATION_MS * 2,
      concurrency: CONCURRENCY,
      a: async (w) =>
        (
          await request(
            `${url}/auth/v1/token?grant_type=password`,
            'POST',
            headers,
            JSON.stringify({ email: users[w]!.email, password }),
          )
        ).status === 200,
      b: () => bare.verify(hashCallers.service, stored, password),
    });

    return [
      row(
        {
          suite: 'identity',
          measure: 'refresh grant throughput',
          value: refresh.perSecond,
          reference: jwt.perSecond,
          referenceName: 'one durable row write + signed JWT',
          unit: 'req/s',
          note: `p50 ${refresh.p50.toFixed(1)} ms, p99 ${refresh.p99.toFixed(1)} ms, errors ${refresh.errors}; reference errors ${jwt.errors}`,
        },
        { minRatio: 0.8, minValue: 1000, also: [['0 errors', refresh.errors === 0]] },
      ),
      row(
        {
          suite: 'identity',
          measure: 'password sign-in throughput',
          value: signIn.perSecond,
          reference: verify.perSecond,
          referenceName: 'bare argon2id verify',
          unit: 'ops/s',
          note: `p50 ${signIn.p50.toFixed(1)} ms, p99 ${signIn.p99.toFixed(1)} ms, errors ${signIn.errors}`,
        },
        { minRatio: 0.9, also: [['0 errors', signIn.errors === 0]] },
      ),
    ];
  } finally {
    child.kill('SIGTERM');
    await once(child, 'exit');
  }
}
