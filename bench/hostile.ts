// Hostile-neighbour benchmark: one tenant's list reads, alone and then while another tenant keeps
// two dozen hostile data-API requests in flight (rows multiplied by self-embeds, adversarial like
// patterns at the limit and over it, a control character in a name, an oversized or-tree), on
// the same server and database. The ratio is the neighbour's throughput under attack to its
// throughput alone; the server runs in a process of its own, as it would in production. The
// goal is the neighbour's fair share: with two tenants at the database, at least half.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { BenchDatabase } from './support/database.js';
import { request, runLoad } from './support/load.js';
import { row, type BenchRow } from './support/report.js';
import { startBenchServer, stopBenchServer } from './support/servers.js';
import { hostilePaths, seedHostileWorkspaces } from '../tests/support/hostile-tenant.js';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const ATTACK_CONCURRENCY = 24;
const NEIGHBOUR_CONCURRENCY = 4;

export async function hostileBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const apiKey = randomBytes(24).toString('hex');
  // The per-caller share stays at its production default (the other benchmarks lift it, as one
  // caller sends all their load): it is part of what keeps a hostile caller from crowding out others.
  const server = await startBenchServer('bench/identity-server.ts', database.url, apiKey, undefined, {
    DATA_API_CALLER_CONCURRENCY: null,
  });
  try {
    const json = { apikey: apiKey, 'content-type': 'application/json' };
    const tenant = async (name: string) => {
      const signUp = await request(
        `${server.url}/auth/v1/signup`,
        'POST',
        json,
        JSON.stringify({ email: `${name}-${Date.now()}@example.com`, password: 'benchmark password' }),
      );
      const headers = {
        ...json,
        authorization: `Bearer ${(JSON.parse(signUp.body) as { access_token: string }).access_token}`,
      };
      const ws = await request(
        `${server.url}/rest/v1/rpc/create_workspace`,
        'POST',
        headers,
        JSON.stringify({ name }),
      );
      return { headers, workspace: (JSON.parse(ws.body) as { id: string }).id };
    };
    const attacker = await tenant('attacker');
    const neighbour = await tenant('neighbour');
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query('update internal.plan_limits set seats = null, projects = null');
      await seedHostileWorkspaces(client, attacker.workspace, neighbour.workspace);
    } finally {
      await client.end();
    }

    const hostile = hostilePaths(attacker.workspace);
    const read = async () =>
      (
        await request(
          `${server.url}/rest/v1/projects?select=id,name&workspace_id=eq.${neighbour.workspace}&limit=20`,
          'GET',
          neighbour.headers,
        )
      ).status === 200;

    const alone = await runLoad({
      durationMs: DURATION_MS * 2,
      concurrency: NEIGHBOUR_CONCURRENCY,
      operation: read,
    });
    const statuses: Record<string, number> = {};
    const stopAt = Date.now() + DURATION_MS * 4;
    const attack = Array.from({ length: ATTACK_CONCURRENCY }, async (_, w) => {
      for (let i = w; Date.now() < stopAt; i++) {
        const res = await request(
          `${server.url}/rest/v1${hostile[i % hostile.length]}`,
          'GET',
          attacker.headers,
        ).catch(() => ({ status: 0 }));
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }
    });
    const [underAttack] = await Promise.all([
      runLoad({ durationMs: DURATION_MS * 4, concurrency: NEIGHBOUR_CONCURRENCY, operation: read }),
      ...attack,
    ]);
    return [
      row(
        {
          suite: 'hostile',
          measure: `a tenant's list reads while another keeps ${ATTACK_CONCURRENCY} hostile requests in flight`,
          value: underAttack.perSecond,
          reference: alone.perSecond,
          referenceName: 'the same reads with no attacker',
          unit: 'req/s',
          note:
            `p50 ${underAttack.p50.toFixed(1)} ms, p99 ${underAttack.p99.toFixed(1)} ms under attack ` +
            `(alone p50 ${alone.p50.toFixed(1)} ms, p99 ${alone.p99.toFixed(1)} ms); neighbour errors ` +
            `${underAttack.errors}; attacker statuses ${JSON.stringify(statuses)}`,
        },
        { minRatio: 0.5, also: [['0 neighbour errors', underAttack.errors === 0 && alone.errors === 0]] },
      ),
    ];
  } finally {
    await stopBenchServer(server.child);
  }
}
