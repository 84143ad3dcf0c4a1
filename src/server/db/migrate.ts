// In charge of applying the plain SQL files of db/migrations, then those of the application's
// folder (migration-files.ts says which and in what order), exactly once each, recording them,
// and serialising concurrent runners (several instances starting together, also through a
// transaction-mode pooler), after checking that the connected role can install at all
// (preflight.ts).
import { CORE_MIGRATIONS_DIR, readMigrations, type MigrationFolder } from './migration-files.js';
import type { Pool, PoolClient } from './pool.js';
import { checkDatabaseSetup } from './preflight.js';

export const MIGRATIONS_DIR = CORE_MIGRATIONS_DIR;

// Arbitrary constant shared by every instance: the advisory lock that serialises migrations.
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

/** The text recorded for a migration is its file's text, or an earlier text it was amended from. */
export function sameText(name: string, recorded: string, checksum: string): boolean {
  return recorded === checksum || (EARLIER_TEXTS[name]?.includes(recorded) ?? false);
}

export interface MigrationResult {
  applied: string[];
  skipped: number;
}

/**
 * Runs `step` in a transaction that holds the migration lock until it commits or rolls back. The
 * lock is transaction-level: a session-level lock stays with whichever server connection a
 * transaction-mode pooler gave the statement that took it, so the runner's next statements would
 * not hold it (another runner, handed that connection, would take it again) and its unlock would
 * miss it, leaving it held for good (decision 0054).
 */
async function locked<T>(client: PoolClient, step: () => Promise<T>): Promise<T> {
  await client.query('begin');
  try {
    await client.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    const result = await step();
    await client.query('commit');
    return result;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  }
}

/**
 * Applies what is pending. `folders` is a core folder, or the folders in the order they apply
 * (migrationFolders(): core, then the application's). Applied names are the recorded ones.
 */
export async function migrate(
  pool: Pool,
  folders: string | readonly MigrationFolder[] = MIGRATIONS_DIR,
): Promise<MigrationResult> {
  const files = readMigrations(typeof folders === 'string' ? [{ kind: 'core', dir: folders }] : folders);
  // What the connected role cannot do is told once, with the SQL that settles it, before any
  // migration half-runs.
  await checkDatabaseSetup(pool);
  const client = await pool.connect();
  try {
    const recorded = await locked(client, async () => {
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
      return new Map(done.rows.map((r) => [r.name, r.checksum]));
    });
    const applied: string[] = [];
    for (const { name: file, sql, checksum } of files) {
      const unchanged = (previous: string) => {
        if (!sameText(file, previous, checksum)) {
          throw new Error(`Migration ${file} was changed after it was applied; add a new migration instead`);
        }
      };
      const previous = recorded.get(file);
      if (previous !== undefined) {
        unchanged(previous);
        continue;
      }
      // Each migration in a transaction of its own that holds the lock: another instance may have
      // applied it since the list above was read, so it is read again under the lock.
      const ran = await locked(client, async () => {
        const now = await client.query<{ checksum: string }>(
          'select checksum from internal.schema_migrations where name = $1',
          [file],
        );
        if (now.rows[0]) {
          unchanged(now.rows[0].checksum);
          return false;
        }
        try {
          await client.query(sql);
        } catch (error) {
          throw new Error(`Migration ${file} failed: ${(error as Error).message}`, { cause: error });
        }
        await client.query('insert into internal.schema_migrations (name, checksum) values ($1, $2)', [
          file,
          checksum,
        ]);
        // Delivered at commit: every data-API instance listening reloads its schema cache.
        await client.query(`select pg_notify('tenantry_schema', 'reload')`);
        return true;
      });
      if (ran) applied.push(file);
    }
    return { applied, skipped: files.length - applied.length };
  } finally {
    client.release();
  }
}
