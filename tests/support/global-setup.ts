// Starts one real embedded PostgreSQL for the whole test run and prepares a migrated template
// database; each test file clones it (CREATE DATABASE … TEMPLATE) for an isolated copy.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../src/server/db/embedded.js';
import { loadDatabaseConfig } from '../../src/server/config.js';
import { migrate } from '../../src/server/db/migrate.js';
import { migrationFolders } from '../../src/server/db/migration-files.js';
import { createPool } from '../../src/server/db/pool.js';
import { ensureWebBuild } from '../../src/server/web.js';

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    templateDatabase: string;
  }
}

export const TEMPLATE_DATABASE = 'tenantry_template';

export default async function setup(project: TestProject) {
  // The browser suites run the real process, which serves the Next.js build. Build it here, once,
  // before the workers start: two suites building in parallel would write the same .next folder.
  await ensureWebBuild();
  const root = mkdtempSync(path.join(tmpdir(), 'tenantry-test-'));
  // When tests run as root the cluster runs as the 'postgres' user, which must reach this folder.
  chmodSync(root, 0o755);
  const server = await startEmbeddedPostgres({ dataDir: path.join(root, 'pg'), port: 0, persistent: false });
  const adminUrl = server.url.replace(/\/tenantry$/, '/postgres');
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${TEMPLATE_DATABASE}`);
  await admin.end();
  const pool = createPool(adminUrl.replace(/\/postgres$/, `/${TEMPLATE_DATABASE}`));
  // The team's migrations too, so their tests run on their tables.
  await migrate(
    pool,
    migrationFolders(
      loadDatabaseConfig({ APP_MIGRATIONS_DIR: process.env.APP_MIGRATIONS_DIR }).appMigrationsDir,
    ),
  );
  await pool.end();
  project.provide('pgAdminUrl', adminUrl);
  project.provide('templateDatabase', TEMPLATE_DATABASE);
  return async () => {
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  };
}
