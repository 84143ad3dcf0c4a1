// Sustained load (autocannon): a realistic mix of list, insert, RPC and token refresh against one
// server process for a few minutes (BENCH_LOAD_SECONDS, default 120), reporting throughput,
// p50/p99 latency, errors, and the server's memory trend: the live heap after a full collection,
// sampled every few seconds, in MB per minute over the second half (near 0 means nothing is
// kept). The resident set is reported beside it; it swings with the collector's cycles, so it
// cannot tell a leak from them. The reference is the same server's bare health endpoint under the same
// load generator, so the ratio shows what the real mix costs.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
import type { BenchDatabase } from './support/database.js';
import { request, runLoad } from './support/load.js';
import { row, type BenchRow } from './support/report.js';
import { startBenchServer, stopBenchServer } from './support/servers.js';

const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 120);
const CONNECTIONS = 16;
/** Seconds between live-heap samples: each forces a full collection, so not every second. */
const HEAP_SAMPLE_SECONDS = Math.max(2, Math.round(SECONDS / 12));

function rssMegabytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** Least-squares slope of (seconds, MB) samples, in MB per minute. */
function slopePerMinute(samples: [number, number][]): number {
  const n = samples.length;
  if (n < 2) return 0;
  const mx = samples.reduce((s, [x]) => s + x, 0) / n;
  const my = samples.reduce((s, [, y]) => s + y, 0) / n;
  const num = samples.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = samples.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return den === 0 ? 0 : (num / den) * 60;
}

function run(options: autocannon.Options): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

export async function loadBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const apiKey = randomBytes(24).toString('hex');
  const server = await startBenchServer('bench/identity-server.ts', database.url, apiKey, undefined, {}, [
    '--expose-gc',
  ]);
  try {
    const json = { apikey: apiKey, 'content-type': 'application/json' };
    // One session per connection (refresh tokens rotate; sharing one would be reuse).
    const sessions: { access: string; refresh: string }[] = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      const res = await request(
        `${server.url}/auth/v1/signup`,
        'POST',
        json,
        JSON.stringify({ email: `load${i}-${Date.now()}@example.com`, password: 'benchmark password' }),
      );
      const body = JSON.parse(res.body) as { access_token: string; refresh_token: string };
      sessions.push({ access: body.access_token, refresh: body.refresh_token });
    }
    const first = sessions[0]!;
    const ws = await request(
      `${server.url}/rest/v1/rpc/create_workspace`,
      'POST',
      { ...json, authorization: `Bearer ${first.access}` },
      JSON.stringify({ name: 'Load' }),
    );
    const workspaceId = (JSON.parse(ws.body) as { id: string }).id;
    // every connection's user works in the same workspace
    // Lift the plan limits and the workspaces one user may own: this measures throughput, not
    // the free plan's project cap or MAX_WORKSPACES_PER_USER.
    {
      const pg = await import('pg');
      const client = new pg.default.Client({ connectionString: database.url });
      await client.connect();
      await client.query('update internal.plan_limits set seats = null, projects = null');
      await client.query('update internal.app_settings set max_workspaces_per_user = 100000');
      await client.end();
    }
    for (const s of sessions.slice(1)) {
      const claims = JSON.parse(Buffer.from(s.access.split('.')[1]!, 'base64url').toString()) as {
        sub: string;
      };
      const pg = await import('pg');
      const client = new pg.default.Client({ connectionString: database.url });
      await client.connect();
      await client.query(`insert into public.workspace_members values ($1, $2, 'member')`, [
        workspaceId,
        claims.sub,
      ]);
      await client.end();
    }

    const reference = await run({
      url: server.url,
      connections: CONNECTIONS,
      duration: Math.max(5, Math.round(SECONDS / 6)),
      requests: [{ method: 'GET', path: '/api/health' }],
    });

    let next = 0;
    const rss: [number, number][] = [];
    const heap: [number, number][] = [];
    const started = Date.now();
    const elapsed = () => (Date.now() - started) / 1000;
    const sampler = setInterval(() => rss.push([elapsed(), rssMegabytes(server.child.pid!)]), 1000);
    // A sample lost to a busy moment is only a sample fewer; the report says how many there were.
    const sampleHeap = async () => {
      const res = await request(`${server.url}/bench/heap`, 'GET', json);
      const { heapUsed, external } = JSON.parse(res.body) as { heapUsed: number; external: number };
      if (!Number.isFinite(heapUsed + external)) throw new Error(`no heap figure: ${res.body}`);
      heap.push([elapsed(), (heapUsed + external) / 1024 / 1024]);
    };
    const heapSampler = setInterval(
      () => void sampleHeap().catch(() => undefined),
      HEAP_SAMPLE_SECONDS * 1000,
    );
    type Context = { session?: { access: string; refresh: string }; n?: number };
    const auth = (context: Context) => {
      context.session ??= sessions[next++ % sessions.length]!;
      return { ...json, authorization: `Bearer ${context.session.access}` };
    };
    // Refreshes run beside autocannon in a loop of their own: each chain must use the token the
    // previous refresh returned, and autocannon stalls when a response feeds the next request.
    const refreshChains = sessions.map((s) => ({ token: s.refresh }));
    const refreshing = runLoad({
      durationMs: SECONDS * 1000,
      concurrency: 4,
      operation: async (w) => {
        const chain = refreshChains[w]!;
        const res = await request(
          `${server.url}/auth/v1/token?grant_type=refresh_token`,
          'POST',
          json,
          JSON.stringify({ refresh_token: chain.token }),
        );
        if (res.status !== 200) return false;
        chain.token = (JSON.parse(res.body) as { refresh_token: string }).refresh_token;
        return true;
      },
    });
    const mix = await run({
      url: server.url,
      connections: CONNECTIONS,
      duration: SECONDS,
      requests: [
        {
          method: 'GET',
          setupRequest: (req, context: Context) => ({
            ...req,
            path: '/rest/v1/projects?select=id,name,created_at&order=created_at.desc&limit=20',
            headers: auth(context),
          }),
        },
        {
          method: 'POST',
          setupRequest: (req, context: Context) => {
            context.n = (context.n ?? 0) + 1;
            return {
              ...req,
              path: '/rest/v1/projects',
              headers: auth(context),
              body: JSON.stringify({ workspace_id: workspaceId, name: `Project ${context.n}` }),
            };
          },
        },
        {
          method: 'POST',
          setupRequest: (req, context: Context) => ({
            ...req,
            path: '/rest/v1/rpc/create_workspace',
            headers: auth(context),
            body: JSON.stringify({ name: `Load ${randomBytes(4).toString('hex')}` }),
          }),
        },
      ],
    });
    const refreshes = await refreshing;
    clearInterval(sampler);
    clearInterval(heapSampler);
    const secondHalf = heap.filter(([t]) => t >= SECONDS / 2);
    const trend = slopePerMinute(secondHalf);
    const errors = mix.errors + mix.non2xx + mix.timeouts + refreshes.errors;
    const perSecond = mix.requests.average + refreshes.perSecond;
    return [
      row(
        {
          suite: 'load',
          measure: `mixed load for ${SECONDS} s (list, insert, RPC, refresh; ${CONNECTIONS} connections)`,
          value: perSecond,
          reference: reference.requests.average,
          referenceName: 'same server, bare health endpoint',
          unit: 'req/s',
          note:
            `p50 ${mix.latency.p50} ms, p99 ${mix.latency.p99} ms (refresh p50 ${refreshes.p50.toFixed(0)} ms, ` +
            `p99 ${refreshes.p99.toFixed(0)} ms), ${mix.requests.total + refreshes.requests} requests, errors ${errors}; ` +
            `live heap after a full collection ${heap[0]?.[1].toFixed(1)} -> ${heap.at(-1)?.[1].toFixed(1)} MB, ` +
            `trend ${trend.toFixed(2)} MB/min over the second half (${secondHalf.length} samples); ` +
            `RSS ${rss[0]?.[1].toFixed(0)} -> ${rss.at(-1)?.[1].toFixed(0)} MB`,
        },
        {
          // The baseline on this machine class: 508 req/s.
          minValue: 2 * 508,
          also: [
            [`p99 < 100 ms`, mix.latency.p99 < 100 && refreshes.p99 < 100],
            ['0 errors', errors === 0],
            ['memory flat (live heap |trend| < 1 MB/min)', secondHalf.length >= 3 && Math.abs(trend) < 1],
          ],
        },
      ),
    ];
  } finally {
    await stopBenchServer(server.child);
  }
}
