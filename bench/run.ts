// `npm run bench`: runs every benchmark suite, prints each figure beside its same-run reference
// as a ratio (with the goal it is held to), and regenerates docs/benchmarks.md. Naming suites
// (`npm run bench -- identity data-api`) runs only those and leaves the report alone; `--quick`
// shortens every measurement (mixed load 20 s, RLS at a tenth of the scale) for a first look.
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { startBenchDatabase, type BenchDatabase } from './support/database.js';
import {
  machineDescription,
  machineSpeed,
  markdownReport,
  printRows,
  type BenchRow,
} from './support/report.js';

const args = process.argv.slice(2);
if (args.includes('--quick')) {
  process.env.BENCH_DURATION_MS ??= '2000';
  process.env.BENCH_LOAD_SECONDS ??= '20';
  process.env.BENCH_SCALE ??= '0.1';
}

// The suites read their durations and scale when loaded, so they are loaded after --quick set them.
const { billingBenchmarks } = await import('./billing.js');
const { dataApiBenchmarks } = await import('./data-api.js');
const { digestBenchmarks } = await import('./digest.js');
const { identityBenchmarks } = await import('./identity.js');
const { loadBenchmarks } = await import('./load.js');
const { hostileBenchmarks } = await import('./hostile.js');
const { storageBenchmarks } = await import('./storage.js');
const { realtimeBenchmarks } = await import('./realtime.js');
const { realtimeFairnessBenchmarks } = await import('./realtime-fairness.js');
const { outgoingWebhookBenchmarks } = await import('./outgoing-webhooks.js');

const suites: [name: string, title: string, run: (db: BenchDatabase) => Promise<BenchRow[]>][] = [
  ['identity', 'identity: refresh and sign-in throughput…', identityBenchmarks],
  ['data-api', 'data API: list throughput and RLS at scale…', dataApiBenchmarks],
  ['billing', 'billing: webhook events per second…', billingBenchmarks],
  ['digest', 'digest: compose and enqueue at 10k and 100k users; SMTP delivery…', digestBenchmarks],
  ['load', `load: a mixed workload for ${process.env.BENCH_LOAD_SECONDS ?? 120} s…`, loadBenchmarks],
  ['hostile', 'hostile: a tenant reading while another attacks…', hostileBenchmarks],
  ['storage', 'storage: upload and download throughput, memory during a 1 GB upload…', storageBenchmarks],
  [
    'realtime',
    'realtime: postgres_changes latency and fan-out under RLS, 1,000 subscribers…',
    realtimeBenchmarks,
  ],
  [
    'realtime-fairness',
    "realtime-fairness: another workspace's broadcast while one floods…",
    realtimeFairnessBenchmarks,
  ],
  [
    'webhooks',
    'webhooks: what a subscribed endpoint costs writers; delivering a backlog…',
    outgoingWebhookBenchmarks,
  ],
];
const named = args.filter((a) => !a.startsWith('--'));
const unknown = named.filter((n) => !suites.some(([name]) => name === n));
if (unknown.length > 0) {
  console.error(`unknown suite ${unknown.join(', ')}; suites: ${suites.map(([n]) => n).join(', ')}`);
  process.exit(2);
}
const selected = named.length === 0 ? suites : suites.filter(([name]) => named.includes(name));
const fullRun = named.length === 0 && !args.includes('--quick');

const speedAtStart = machineSpeed();
const database = await startBenchDatabase();
const rows: BenchRow[] = [];
try {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const version = (await client.query<{ v: string }>("select current_setting('server_version') as v"))
    .rows[0]!.v;
  await client.end();

  for (const [, title, run] of selected) {
    console.log(title);
    rows.push(...(await run(database)));
  }
  printRows(rows);
  const speed = { start: speedAtStart, end: machineSpeed() };
  console.log(
    `machine speed, start -> end: SHA-256 ${speed.start.sha256} -> ${speed.end.sha256} MB/s, ` +
      `durable 8 KiB write ${speed.start.durableWrite} -> ${speed.end.durableWrite} µs`,
  );

  if (fullRun) {
    writeFileSync('docs/benchmarks.md', markdownReport(rows, machineDescription(version, speed), new Date()));
    console.log('wrote docs/benchmarks.md');
  }
} finally {
  await database.stop();
}
