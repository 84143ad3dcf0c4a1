// Data-API benchmarks: (a) a /rest/v1 list query against a minimal node:http + pg server running
// the same SQL under the same RLS; (b) the same list with prepared statements off (as behind a
// transaction-mode pooler) against on; (c) with 10k workspaces, 100k memberships and 1M projects,
// a member's RLS-filtered list against the same query run with RLS bypassed and an explicit filter,
// both run as the data API runs a read (and, in the note, both as plain SQL parsed each time).
import { randomBytes } from 'node:crypto';
import { createPool } from '../src/server/db/pool.js';
import { runAsCaller, withRls } from '../src/server/db/transactions.js';
import type { BenchDatabase } from './support/database.js';
import { childrenCpuMs, cpuMs, postmasterOf } from './support/cpu.js';
import { compareLoads, request, runLoad } from './support/load.js';
import { row, type BenchRow } from './support/report.js';
import { startBenchServer, stopBenchServer } from './support/servers.js';

const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const CONCURRENCY = 32;
const SCALE = Number(process.env.BENCH_SCALE ?? 1); // 1 = 10k workspaces / 100k members / 1M projects

async function restList(database: BenchDatabase): Promise<BenchRow> {
  const apiKey = randomBytes(24).toString('hex');
  const jwtSecret = randomBytes(32).toString('hex');
  const ours = await startBenchServer('bench/identity-server.ts', database.url, apiKey, jwtSecret);
  const reference = await startBenchServer('bench/rest-reference-server.ts', database.url, apiKey, jwtSecret);
  try {
    const json = { apikey: apiKey, 'content-type': 'application/json' };
    const signUp = await request(
      `${ours.url}/auth/v1/signup`,
      'POST',
      json,
      JSON.stringify({ email: `list-${Date.now()}@example.com`, password: 'benchmark password' }),
    );
    const token = (JSON.parse(signUp.body) as { access_token: string }).access_token;
    const auth = { ...json, authorization: `Bearer ${token}` };
    const ws = await request(
      `${ours.url}/rest/v1/rpc/create_workspace`,
      'POST',
      auth,
      JSON.stringify({ name: 'Bench' }),
    );
    const workspaceId = (JSON.parse(ws.body) as { id: string }).id;
    const rows = Array.from({ length: 50 }, (_, i) => ({ workspace_id: workspaceId, name: `Project ${i}` }));
    await request(`${ours.url}/rest/v1/projects`, 'POST', auth, JSON.stringify(rows));

    const path = '/rest/v1/projects?select=id,name,created_at&order=created_at.desc&limit=20';
    const { a: ourLoad, b: referenceLoad } = await compareLoads({
      durationMs: DURATION_MS * 2,
      concurrency: CONCURRENCY,
      a: async () => (await request(`${ours.url}${path}`, 'GET', auth)).status === 200,
      b: async () => (await request(`${reference.url}/`, 'GET', auth)).status === 200,
    });
    return row(
      {
        suite: 'data API',
        measure: '/rest/v1 list (20 of 50 rows, RLS)',
        value: ourLoad.perSecond,
        reference: referenceLoad.perSecond,
        referenceName: 'minimal node:http + pg, same SQL and RLS',
        unit: 'req/s',
        note: `p50 ${ourLoad.p50.toFixed(1)} ms vs ${referenceLoad.p50.toFixed(1)} ms; errors ${ourLoad.errors}/${referenceLoad.errors}`,
      },
      { minRatio: 1.5, also: [['0 errors', ourLoad.errors + referenceLoad.errors === 0]] },
    );
  } finally {
    await stopBenchServer(ours.child);
    await stopBenchServer(reference.child);
  }
}

/**
 * What turning named prepared statements off costs the list (DATABASE_PREPARED_STATEMENTS=off,
 * the default behind a transaction-mode pooler): two instances of the server on one database,
 * one with them off and one with them on, loaded in alternating slices by the same client. The
 * figure is the CPU time per request of the server and of the PostgreSQL backends together (read
 * from /proc; each slice loads one server, so the cluster's time in it is that server's); the
 * throughput of each is in the note, but on a shared machine it swings with the other work.
 */
async function listWithoutPreparedStatements(database: BenchDatabase): Promise<BenchRow> {
  const apiKey = randomBytes(24).toString('hex');
  const jwtSecret = randomBytes(32).toString('hex');
  const servers = {
    off: await startBenchServer('bench/identity-server.ts', database.url, apiKey, jwtSecret, {
      DATABASE_PREPARED_STATEMENTS: 'off',
    }),
    on: await startBenchServer('bench/identity-server.ts', database.url, apiKey, jwtSecret, {
      DATABASE_PREPARED_STATEMENTS: 'on',
    }),
  };
  try {
    const postmaster = postmasterOf(Number(/:(\d+)\/[^/]*$/.exec(database.url)?.[1]));
    if (postmaster === null) throw new Error('the benchmark database server was not found in /proc');
    const json = { apikey: apiKey, 'content-type': 'application/json' };
    const signUp = await request(
      `${servers.on.url}/auth/v1/signup`,
      'POST',
      json,
      JSON.stringify({ email: `unprepared-${Date.now()}@example.com`, password: 'benchmark password' }),
    );
    const token = (JSON.parse(signUp.body) as { access_token: string }).access_token;
    const auth = { ...json, authorization: `Bearer ${token}` };
    const ws = await request(
      `${servers.on.url}/rest/v1/rpc/create_workspace`,
      'POST',
      auth,
      JSON.stringify({ name: 'Unprepared' }),
    );
    const workspaceId = (JSON.parse(ws.body) as { id: string }).id;
    const rows = Array.from({ length: 50 }, (_, i) => ({ workspace_id: workspaceId, name: `Project ${i}` }));
    await request(`${servers.on.url}/rest/v1/projects`, 'POST', auth, JSON.stringify(rows));

    const path = '/rest/v1/projects?select=id,name,created_at&order=created_at.desc&limit=20';
    const list = (side: 'off' | 'on') => async () =>
      (await request(`${servers[side].url}${path}`, 'GET', auth)).status === 200;
    const totals = {
      off: { requests: 0, errors: 0, seconds: 0, serverMs: 0, databaseMs: 0 },
      on: { requests: 0, errors: 0, seconds: 0, serverMs: 0, databaseMs: 0 },
    };
    // Warm-up: every pool connection open, statements prepared where they are kept.
    for (const side of ['off', 'on'] as const) {
      await runLoad({ durationMs: 1000, concurrency: CONCURRENCY, operation: list(side) });
    }
    const slices = 8;
    for (let i = 0; i < slices; i++) {
      for (const side of i % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
        const server = servers[side].child.pid!;
        const [serverBefore, databaseBefore] = [cpuMs(server), childrenCpuMs(postmaster)];
        const load = await runLoad({
          durationMs: (DURATION_MS * 2) / slices,
          concurrency: CONCURRENCY,
          operation: list(side),
        });
        const total = totals[side];
        total.serverMs += cpuMs(server) - serverBefore;
        total.databaseMs += childrenCpuMs(postmaster) - databaseBefore;
        total.requests += load.requests;
        total.errors += load.errors;
        total.seconds += load.seconds;
      }
    }
    const perRequest = (side: 'off' | 'on') => ({
      server: (totals[side].serverMs * 1000) / totals[side].requests,
      database: (totals[side].databaseMs * 1000) / totals[side].requests,
      perSecond: totals[side].requests / totals[side].seconds,
    });
    const off = perRequest('off');
    const on = perRequest('on');
    const micro = (n: number) => `${n.toFixed(0)} µs`;
    return row({
      suite: 'data API',
      measure: '/rest/v1 list (20 of 50 rows, RLS), prepared statements off: CPU per request',
      value: off.server + off.database,
      reference: on.server + on.database,
      referenceName: 'the same server with prepared statements on',
      unit: 'µs/req',
      note:
        `what a transaction-mode pooler without prepared-statement support costs (DATABASE_PREPARED_STATEMENTS=off); ` +
        `PostgreSQL ${micro(off.database)} vs ${micro(on.database)}, server ${micro(off.server)} vs ${micro(on.server)}; ` +
        `${off.perSecond.toFixed(0)} vs ${on.perSecond.toFixed(0)} req/s (${(off.perSecond / on.perSecond).toFixed(3)}); ` +
        `errors ${totals.off.errors}/${totals.on.errors}`,
    });
  } finally {
    await stopBenchServer(servers.off.child);
    await stopBenchServer(servers.on.child);
  }
}

/**
 * Milliseconds per call of a and of b, called one at a time in alternating slices after a warm-up
 * (compareLoads), so both see the same quiet and busy moments of a shared machine.
 */
async function msPerCall(
  a: () => Promise<unknown>,
  b: () => Promise<unknown>,
): Promise<{ a: number; b: number; errors: number }> {
  for (let i = 0; i < 20; i++) {
    await a();
    await b();
  }
  const succeeds = (fn: () => Promise<unknown>) => async () => (await fn(), true);
  const loads = await compareLoads({
    durationMs: DURATION_MS,
    concurrency: 1,
    slices: 10,
    a: succeeds(a),
    b: succeeds(b),
  });
  return {
    a: 1000 / loads.a.perSecond,
    b: 1000 / loads.b.perSecond,
    errors: loads.a.errors + loads.b.errors,
  };
}

async function rlsAtScale(database: BenchDatabase): Promise<BenchRow> {
  const workspaces = 10_000 * SCALE;
  const users = 20_000 * SCALE;
  const pool = createPool(database.url, { max: 2 });
  const started = performance.now();
  const client = await pool.connect();
  try {
    // Bulk load as superuser with triggers off (no activity rows, no profile rows needed here).
    await client.query(`set session_replication_role = replica`);
    await client.query(
      `insert into auth.users (id, email, email_confirmed_at)
       select ('00000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, 'scale' || g || '@example.com', now()
       from generate_series(1, $1) g`,
      [users],
    );
    await client.query(
      `insert into public.workspaces (id, name, slug)
       select ('10000000-0000-4000-8000-' || lpad(to_hex(g), 12, '0'))::uuid, 'Scale ' || g, 'scale-' || g
       from generate_series(1, $1) g`,
      [workspaces],
    );
    // ten members per workspace; each user ends up in five workspaces
    await client.query(
      `insert into public.workspace_members (workspace_id, user_id, role)
       select ('10000000-0000-4000-8000-' || lpad(to_hex(w), 12, '0'))::uuid,
              ('00000000-0000-4000-8000-' || lpad(to_hex(((w * 10 + k) % $2) + 1), 12, '0'))::uuid,
              (array['owner','admin','member','viewer'])[1 + k % 4]::public.workspace_role
       from generate_series(1, $1) w, generate_series(0, 9) k
       on conflict do nothing`,
      [workspaces, users],
    );
    await client.query(
      `insert into public.projects (workspace_id, name, created_at)
       select ('10000000-0000-4000-8000-' || lpad(to_hex(w), 12, '0'))::uuid, 'Project ' || p,
              now() - (p || ' minutes')::interval
       from generate_series(1, $1) w, generate_series(1, 100) p`,
      [workspaces],
    );
    await client.query(`set session_replication_role = origin`);
    // Vacuumed here, not by the autovacuum the bulk load would set off while the queries are timed.
    await client.query(
      'vacuum (analyze) public.projects, public.workspace_members, public.workspaces, auth.users',
    );
  } finally {
    client.release();
  }
  const loadSeconds = (performance.now() - started) / 1000;

  const counts = await pool.query<{ members: string; projects: string }>(
    `select (select count(*) from public.workspace_members) as members, (select count(*) from public.projects) as projects`,
  );
  const user = '00000000-0000-4000-8000-' + (1234).toString(16).padStart(12, '0');
  const mine = await pool.query<{ workspace_id: string }>(
    'select workspace_id from public.workspace_members where user_id = $1',
    [user],
  );
  const ids = mine.rows.map((r) => r.workspace_id);
  const list = 'select id, name from public.projects order by created_at desc limit 50';
  const claims = { role: 'authenticated' as const, sub: user };

  const explicit =
    'select id, name from public.projects where workspace_id = any($1) order by created_at desc limit 50';
  // The goal compares the two statements as the data API runs a read (decision 0029): the
  // caller's settings and the statement in one round trip, prepared, read-only. Each is also
  // timed as plain SQL in a transaction of its own, parsed and planned every time, and reported
  // beside the goal.
  const read = { readOnly: true, readTimeoutMs: 30_000 };
  const prepared = await msPerCall(
    () => runAsCaller(pool, claims, { text: list, values: [] }, read),
    () => runAsCaller(pool, { role: 'service_role' }, { text: explicit, values: [ids] }, read),
  );
  const adHoc = await msPerCall(
    () => withRls(pool, claims, (tx) => tx.query(list)),
    () => withRls(pool, { role: 'service_role' }, (tx) => tx.query(explicit, [ids])),
  );
  await pool.end();
  return row(
    {
      suite: 'data API',
      measure: `RLS list at scale (${Number(counts.rows[0]!.members).toLocaleString('en')} members, ${Number(counts.rows[0]!.projects).toLocaleString('en')} projects)`,
      value: prepared.a,
      reference: prepared.b,
      referenceName: 'same query, RLS bypassed, explicit workspace filter',
      unit: 'ms/query',
      note:
        `as the data API runs a read (one round trip, prepared); member of ${ids.length} workspaces; lower is better, 1.0 = RLS costs nothing; ` +
        `as plain SQL in four round trips, parsed each time: ${adHoc.a.toFixed(2)} vs ${adHoc.b.toFixed(2)} ms/query (${(adHoc.a / adHoc.b).toFixed(3)}); ` +
        `data load and vacuum ${loadSeconds.toFixed(0)} s`,
    },
    { maxRatio: 1.1, also: [['0 errors', prepared.errors + adHoc.errors === 0]] },
  );
}

export async function dataApiBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  return [
    await restList(database),
    await listWithoutPreparedStatements(database),
    await rlsAtScale(database),
  ];
}
