// Realtime benchmarks: postgres_changes under row-level security at the scale of a busy product,
// 1,000 subscribers (one user each, ten per workspace) across 100 workspaces, all subscribed to
// one table with no filter, so row-level security alone decides that each change reaches the ten
// members of its workspace. Measured: commit-to-delivery latency (p50, p99) at 100 changes/s, and
// delivered events per second when changes are written as fast as four writers can, each against
// a bare NOTIFY-to-websocket server making the same fan-out without any check (the floor). The
// subscribers are raw sockets speaking realtime-js's frames, in this process, so the servers'
// work is what is measured; the servers run as child processes.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import WebSocket from 'ws';
import type { BenchDatabase } from './support/database.js';
import { row, type BenchRow } from './support/report.js';
import { startBenchServer, stopBenchServer } from './support/servers.js';

const WORKSPACES = Number(process.env.BENCH_REALTIME_WORKSPACES ?? 100);
const PER_WORKSPACE = 10;
const RATE = 100;
const quick = Number(process.env.BENCH_DURATION_MS ?? 5000) < 5000;
const LATENCY_SECONDS = quick ? 5 : 20;
const BURST = quick ? 1000 : 4000;
const WRITERS = 4;

interface Subscriber {
  ws: WebSocket;
  workspace: number;
}

interface Side {
  /** the table written to */
  table: string;
  /** what each delivered change calls with its n */
  onChange: (n: number) => void;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function setUp(
  pool: pg.Pool,
): Promise<{ workspaces: string[]; users: { id: string; session: string; workspace: number }[] }> {
  await pool.query(`
    create table if not exists public.bench_rt_items (
      id bigint generated always as identity primary key,
      workspace_id uuid not null references public.workspaces (id) on delete cascade,
      n integer not null
    );
    alter table public.bench_rt_items enable row level security;
    drop policy if exists bench_rt_items_read on public.bench_rt_items;
    create policy bench_rt_items_read on public.bench_rt_items for select to authenticated
      using (workspace_id = any ((select tenantry.workspace_ids())::uuid[]));
    grant select on public.bench_rt_items to authenticated;
    select realtime.enable_changes('public.bench_rt_items', scope => 'workspace_id');
    create table if not exists public.bench_rt_reference (
      id bigint generated always as identity primary key,
      workspace_id uuid not null,
      n integer not null
    );
    create or replace function public.bench_reference_notify() returns trigger language plpgsql as $$
    begin
      perform pg_notify('bench_reference', json_build_object(
        'workspace_id', new.workspace_id,
        'data', json_build_object('schema', 'public', 'table', 'bench_rt_reference',
          'commit_timestamp', to_char(now() at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'type', 'INSERT', 'columns', '[]'::json, 'record', to_jsonb(new), 'old_record', '{}'::json,
          'errors', null))::text);
      return null;
    end $$;
    drop trigger if exists bench_reference_notify on public.bench_rt_reference;
    create trigger bench_reference_notify after insert on public.bench_rt_reference
      for each row execute function public.bench_reference_notify();`);
  const workspaces: string[] = [];
  const users: { id: string; session: string; workspace: number }[] = [];
  for (let w = 0; w < WORKSPACES; w += 1) {
    const tag = randomUUID().slice(0, 8);
    const { rows: members } = await pool.query<{ id: string; session: string }>(
      `with u as (insert into auth.users (email, email_confirmed_at)
                  select 'rt-' || $1 || '-' || g || '@example.com', now() from generate_series(1, $2) g
                  returning id),
            s as (insert into auth.sessions (user_id) select id from u returning id, user_id)
       select s.user_id as id, s.id as session from s`,
      [tag, PER_WORKSPACE],
    );
    const { rows } = await pool.query<{ id: string }>(
      `insert into public.workspaces (name, slug, created_by) values ($1, $1, $2) returning id`,
      [`bench-${tag}`, members[0]!.id],
    );
    const workspace = rows[0]!.id;
    await pool.query(
      `insert into public.workspace_members (workspace_id, user_id, role)
       select $1, m, case when m = $2 then 'owner' else 'member' end::public.workspace_role
         from unnest($3::uuid[]) m`,
      [workspace, members[0]!.id, members.map((m) => m.id)],
    );
    workspaces.push(workspace);
    for (const m of members) users.push({ ...m, workspace: w });
  }
  return { workspaces, users };
}

function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });
}

/** Subscribers of the real server: a socket each, joined to the table with the user's token. */
async function subscribeOurs(
  url: string,
  apiKey: string,
  users: { id: string; session: string; workspace: number }[],
  side: Side,
): Promise<Subscriber[]> {
  const subscribers: Subscriber[] = [];
  const wsUrl = `${url.replace('http', 'ws')}/realtime/v1/websocket?apikey=${apiKey}&vsn=2.0.0`;
  for (let i = 0; i < users.length; i += 50) {
    await Promise.all(
      users.slice(i, i + 50).map(async (user) => {
        const res = await fetch(`${url}/bench/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ sub: user.id, session: user.session }),
        });
        const { access_token: token } = (await res.json()) as { access_token: string };
        const ws = await open(wsUrl);
        const subscribed = new Promise<void>((resolve, reject) => {
          ws.on('message', (data: Buffer) => {
            const text = data.toString();
            if (text.includes('"postgres_changes",{"ids"')) {
              const frame = JSON.parse(text) as [
                null,
                null,
                string,
                string,
                { data: { record: { n: number } } },
              ];
              side.onChange(frame[4].data.record.n);
            } else if (text.includes('Subscribed to PostgreSQL')) resolve();
            else if (text.includes('"status":"error"')) reject(new Error(text));
          });
        });
        ws.send(
          JSON.stringify([
            '1',
            '1',
            'realtime:items',
            'phx_join',
            {
              config: {
                broadcast: { ack: false, self: false },
                presence: { key: '', enabled: false },
                postgres_changes: [{ event: 'INSERT', schema: 'public', table: side.table }],
                private: false,
              },
              access_token: token,
            },
          ]),
        );
        await subscribed;
        subscribers.push({ ws, workspace: user.workspace });
      }),
    );
  }
  return subscribers;
}

async function subscribeReference(
  url: string,
  users: { workspace: number }[],
  workspaces: string[],
  side: Side,
): Promise<Subscriber[]> {
  const subscribers: Subscriber[] = [];
  for (let i = 0; i < users.length; i += 100) {
    await Promise.all(
      users.slice(i, i + 100).map(async (user) => {
        const ws = await open(`${url.replace('http', 'ws')}/?workspace=${workspaces[user.workspace]}`);
        ws.on('message', (data: Buffer) => {
          const frame = JSON.parse(data.toString()) as [
            null,
            null,
            string,
            string,
            { data: { record: { n: number } } },
          ];
          side.onChange(frame[4].data.record.n);
        });
        subscribers.push({ ws, workspace: user.workspace });
      }),
    );
  }
  return subscribers;
}

/**
 * Writes `count` changes at `rate` per second (or as fast as the writers go when rate is 0),
 * round-robin over the workspaces; resolves with each change's commit time by n.
 */
async function write(
  pool: pg.Pool,
  table: string,
  workspaces: string[],
  first: number,
  count: number,
  rate: number,
  committed: Map<number, number>,
): Promise<void> {
  let next = first;
  const started = performance.now();
  const writer = async () => {
    for (;;) {
      const n = next;
      if (n >= first + count) return;
      next += 1;
      if (rate > 0) {
        const due = started + ((n - first) * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      }
      await pool.query(`insert into public.${table} (workspace_id, n) values ($1, $2)`, [
        workspaces[n % workspaces.length],
        n,
      ]);
      committed.set(n, performance.now());
    }
  };
  await Promise.all(Array.from({ length: rate > 0 ? 1 : WRITERS }, writer));
}

async function waitFor(predicate: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

interface Figures {
  p50: number;
  p99: number;
  missing: number;
  eventsPerSecond: number;
}

async function measure(
  pool: pg.Pool,
  table: string,
  workspaces: string[],
  side: { received: Map<number, number[]> },
): Promise<Figures> {
  const expected = PER_WORKSPACE;
  // Warm-up: one change per workspace, all delivered, so what the joins left queued is not counted.
  side.received.clear();
  await write(pool, table, workspaces, 2_000_000, workspaces.length, 0, new Map());
  await waitFor(() => side.received.size >= workspaces.length, 30_000);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  // Latency at a steady 100 changes/s.
  const committed = new Map<number, number>();
  side.received.clear();
  const steady = LATENCY_SECONDS * RATE;
  await write(pool, table, workspaces, 0, steady, RATE, committed);
  await waitFor(
    () => [...committed.keys()].every((n) => (side.received.get(n)?.length ?? 0) >= expected),
    10_000,
  );
  const latencies: number[] = [];
  let missing = 0;
  for (const [n, at] of committed) {
    const got = side.received.get(n) ?? [];
    missing += Math.max(0, expected - got.length);
    for (const t of got) latencies.push(t - at);
  }
  latencies.sort((a, b) => a - b);
  // Throughput: as fast as the writers go, until every member has every change.
  side.received.clear();
  const burst = new Map<number, number>();
  const start = performance.now();
  let delivered = 0;
  await write(pool, table, workspaces, 1_000_000, BURST, 0, burst);
  await waitFor(() => {
    delivered = 0;
    for (const got of side.received.values()) delivered += got.length;
    return delivered >= BURST * expected;
  }, 60_000);
  let last = start;
  for (const got of side.received.values()) for (const t of got) last = Math.max(last, t);
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    missing,
    eventsPerSecond: delivered / ((last - start) / 1000),
  };
}

/**
 * What capturing costs a writer: single-row inserts (one transaction each, four writers) into a
 * table with the capture trigger against the same table without it, alternating rounds, best of
 * each kept. Nobody is subscribed yet, so this is the trigger and the outbox row alone.
 */
async function captureOverhead(pool: pg.Pool): Promise<{ with: number; without: number }> {
  await pool.query(`
    create table if not exists public.bench_rt_plain (
      id bigint generated always as identity primary key, workspace_id uuid not null, n integer not null);
    create table if not exists public.bench_rt_captured (
      id bigint generated always as identity primary key, workspace_id uuid not null, n integer not null);
    select realtime.enable_changes('public.bench_rt_captured');`);
  const rows = quick ? 2000 : 8000;
  const rate = async (table: string) => {
    let next = 0;
    const started = performance.now();
    const writer = async () => {
      while (next < rows) {
        next += 1;
        await pool.query(`insert into public.${table} (workspace_id, n) values ($1, $2)`, [
          randomUUID(),
          next,
        ]);
      }
    };
    await Promise.all(Array.from({ length: WRITERS }, writer));
    return rows / ((performance.now() - started) / 1000);
  };
  const best = { with: 0, without: 0 };
  for (let round = 0; round < 3; round += 1) {
    best.without = Math.max(best.without, await rate('bench_rt_plain'));
    best.with = Math.max(best.with, await rate('bench_rt_captured'));
  }
  return best;
}

export async function realtimeBenchmarks(database: BenchDatabase): Promise<BenchRow[]> {
  const apiKey = randomUUID();
  const pool = new pg.Pool({ connectionString: database.url, max: WRITERS + 2 });
  const ours = await startBenchServer('bench/realtime-server.ts', database.url, apiKey, undefined, {
    REALTIME_MAX_CONNECTIONS_PER_ADDRESS: '100000',
    // Every subscriber connects from this one address.
    HTTP_MAX_CONNECTIONS_PER_ADDRESS: '100000',
    HTTP_MAX_CONNECTIONS: '100000',
  });
  const reference = await startBenchServer('bench/realtime-reference-server.ts', database.url, apiKey);
  const sockets: WebSocket[] = [];
  try {
    const { workspaces, users } = await setUp(pool);
    // Before anyone subscribes: what the trigger costs writers, with no reader competing.
    const capture = await captureOverhead(pool);
    const oursSide = { received: new Map<number, number[]>() };
    const referenceSide = { received: new Map<number, number[]>() };
    const recorder = (side: { received: Map<number, number[]> }) => (n: number) => {
      const list = side.received.get(n) ?? [];
      list.push(performance.now());
      side.received.set(n, list);
    };
    const oursSubscribers = await subscribeOurs(ours.url, apiKey, users, {
      table: 'bench_rt_items',
      onChange: recorder(oursSide),
    });
    const referenceSubscribers = await subscribeReference(reference.url, users, workspaces, {
      table: 'bench_rt_reference',
      onChange: recorder(referenceSide),
    });
    sockets.push(...oursSubscribers.map((s) => s.ws), ...referenceSubscribers.map((s) => s.ws));
    // Heartbeats, as realtime-js sends them, keep our sockets open through the run.
    const heartbeat = setInterval(() => {
      for (const s of oursSubscribers) s.ws.send(JSON.stringify([null, 'hb', 'phoenix', 'heartbeat', {}]));
    }, 20_000);
    const oursFigures = await measure(pool, 'bench_rt_items', workspaces, oursSide);
    const referenceFigures = await measure(pool, 'bench_rt_reference', workspaces, referenceSide);
    clearInterval(heartbeat);
    const scale = `${users.length} subscribers (one user each) across ${workspaces.length} workspaces, no filter: row-level security picks the 10 of each change`;
    return [
      row({
        suite: 'realtime',
        measure: 'postgres_changes commit-to-delivery p50 at 100 changes/s',
        value: oursFigures.p50,
        reference: referenceFigures.p50,
        referenceName: 'bare NOTIFY to websocket, same fan-out, no RLS',
        unit: 'ms',
        note: `${scale}; ${LATENCY_SECONDS} s; ${oursFigures.missing} deliveries missing (reference ${referenceFigures.missing})`,
      }),
      row(
        {
          suite: 'realtime',
          measure: 'postgres_changes commit-to-delivery p99 at 100 changes/s',
          value: oursFigures.p99,
          reference: referenceFigures.p99,
          referenceName: 'bare NOTIFY to websocket, same fan-out, no RLS',
          unit: 'ms',
          note: scale,
        },
        { also: [['p99 < 250 ms', oursFigures.p99 < 250]] },
      ),
      row(
        {
          suite: 'realtime',
          measure: 'postgres_changes delivered events/s, writers unthrottled',
          value: oursFigures.eventsPerSecond,
          reference: referenceFigures.eventsPerSecond,
          referenceName: 'bare NOTIFY to websocket, same fan-out, no RLS',
          unit: 'events/s',
          note: `${scale}; ${BURST} changes from ${WRITERS} writers, one transaction each`,
        },
        { minRatio: 0.5 },
      ),
      row({
        suite: 'realtime',
        measure: 'single-row inserts/s into a table whose changes are captured',
        value: capture.with,
        reference: capture.without,
        referenceName: 'the same table without the capture trigger',
        unit: 'inserts/s',
        note: `${WRITERS} writers, one transaction per insert, best of 3 alternating rounds; the trigger writes one outbox row`,
      }),
    ];
  } finally {
    for (const ws of sockets) ws.terminate();
    await pool.end();
    await stopBenchServer(ours.child);
    await stopBenchServer(reference.child);
  }
}
