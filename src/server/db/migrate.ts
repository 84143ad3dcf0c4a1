// In charge of applying the plain SQL files in db/migrations in name order, exactly once each,
// recording them, and serialising concurrent runners (several instances starting together), after
// checking that the connected role can install at all (preflight.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pool } from './pool.js';
import { checkDatabaseSetup } from './preflight.js';

export const MIGRATIONS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../db/migrations',
);

// Arbitrary constant shared by every instance: the advisory lock that serialises migration runs.
const MIGRATION_LOCK_KEY = 7_262_019_001;

/**
 * Migrations amended after they were released, with the checksums of their earlier texts. An
 * amendment is made only when it leaves a database that applied the earlier text as it is (it
 * makes a statement conditional, or grants what a superuser install never needed), so such a
 * database is not asked to apply it again. docs/decisions/0053 says which and why.
 */
const EARLIER_TEXTS: Readonly<Record<string, readonly string[]>> = {
  // 0001 changes service_role's BYPASSRLS only when it is not already right, and lets service_role
  // create in public and internal, so a role that is not a superuser can install.
  '0001_roles_and_auth.sql': ['60ba70016f729305af1d5ad9aafb5b4e4df6c9c70183c21e9065f2204e24d019'],
};

export interface MigrationResult {
  applied: string[];
  skipped: number;
}

export async function migrate(pool: Pool, dir = MIGRATIONS_DIR): Promise<MigrationResult> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.sql'))
    .sort();
  // What the connected role cannot do is told once, with the SQL that settles it, before any
  // migration half-runs.
  await checkDatabaseSetup(pool);
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`
      create schema if not exists internal;
      create table if not exists internal.schema_migrations (
        name text primary key,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`);
    const done = await client.query<{ name: string; checksum: string }>(
      'select name, checksum from internal.schema_migrations',
    );
    const recorded = new Map(done.rows.map((r) => [r.name, r.checksum]));
    const applied: string[] = [];
    for (const file of files) {
      const sql = readFileSync(path.join(dir, file), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      const previous = recorded.get(file);
      if (previous !== undefined) {
        if (previous !== checksum && !EARLIER_TEXTS[file]?.includes(previous)) {
          throw new Error(`Migration ${file} was changed after it was applied; add a new migration instead`);
        }
        continue;
      }
      await client.query('begin');
      try {
        await client.query(sql);
        await client.query('insert into internal.schema_migrations (name, checksum) values ($1, $2)', [
          file,
          checksum,
        ]);
        await client.query('commit');
      } catch (error) {
        await client.query('rollback');
        throw new Error(`Migration ${file} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(file);
    }
    // Tell every data-API instance to reload its schema cache.
    if (applied.length > 0) await client.query(`select pg_notify('tenantry_schema', 'reload')`);
    return { applied, skipped: files.length - applied.length };
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    client.release();
  }
}
