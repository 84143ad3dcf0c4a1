// `npm run bench`: runs every benchmark suite, prints each figure beside its same-run reference
// as a ratio, and regenerates docs/benchmarks.md.
import { writeFileSync } from 'node:fs';
import pg from 'pg';
import { billingBenchmarks } from './billing.js';
import { dataApiBenchmarks } from './data-api.js';
import { digestBenchmarks } from './digest.js';
import { identityBenchmarks } from './identity.js';
import { loadBenchmarks } from './load.js';
import { startBenchDatabase } from './support/database.js';
import { machineDescription, markdownReport, printRows, type BenchRow } from './support/report.js';

const database = await startBenchDatabase();
const rows: BenchRow[] = [];
try {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const version = (await client.query<{ v: string }>("select current_setting('server_version') as v"))
    .rows[0]!.v;
  await client.end();

  console.log('identity: refresh and sign-in throughput…');
  rows.push(...(await identityBenchmarks(database)));
  console.log('data API: list throughput and RLS at scale…');
  rows.push(...(await dataApiBenchmarks(database)));
  console.log('billing: webhook events per second…');
  rows.push(...(await billingBenchmarks(database)));
  console.log('digest: compose and enqueue at 10k and 100k users; SMTP delivery…');
  rows.push(...(await digestBenchmarks(database)));
  console.log(`load: a mixed workload for ${process.env.BENCH_LOAD_SECONDS ?? 120} s…`);
  rows.push(...(await loadBenchmarks(database)));
  printRows(rows);

  writeFileSync('docs/benchmarks.md', markdownReport(rows, machineDescription(version), new Date()));
  console.log('wrote docs/benchmarks.md');
} finally {
  await database.stop();
}
