// Benchmark support: a throwaway embedded PostgreSQL with the migrations applied.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../src/server/db/embedded.js';
import { migrate } from '../../src/server/db/migrate.js';
import { createPool } from '../../src/server/db/pool.js';

export interface BenchDatabase {
  url: string;
  stop(): Promise<void>;
}

export async function startBenchDatabase(): Promise<BenchDatabase> {
  const root = mkdtempSync(path.join(tmpdir(), 'tenantry-bench-'));
  chmodSync(root, 0o755); // the cluster runs as 'postgres' when we are root
  const server = await startEmbeddedPostgres({ dataDir: path.join(root, 'pg'), port: 0, persistent: false });
  const pool = createPool(server.url);
  await migrate(pool);
  await pool.end();
  return {
    url: server.url,
    stop: async () => {
      await server.stop();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
