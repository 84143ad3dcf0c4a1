// `npm run db:migrate`: applies the pending migrations, core then the application's, with the
// same checks, lock and records as start-up, without starting the service; then tells running
// instances to reload their schema caches, so a new table is served at once.
import { migrate } from '../db/migrate.js';
import { migrationFolders } from '../db/migration-files.js';
import { createPool, poolOptionsFrom } from '../db/pool.js';
import { commandConfig, openCommandDatabase, shownPath } from './db-context.js';

const config = commandConfig();
const database = await openCommandDatabase(config);
const pool = createPool(database.url, { ...poolOptionsFrom(config.database), max: 2 });
try {
  const result = await migrate(pool, migrationFolders(config.appMigrationsDir));
  // Also when nothing was pending: a change made by hand (npm run db:shell) reaches the instances.
  await pool.query(`select pg_notify('tenantry_schema', 'reload')`);
  for (const name of result.applied) process.stdout.write(`applied ${name}\n`);
  process.stdout.write(
    result.applied.length > 0
      ? `${result.applied.length} migration(s) applied, ${result.skipped} already applied; running instances reload their schema cache.\n`
      : `Nothing to apply: all ${result.skipped} migrations are applied (app folder: ${shownPath(config.appMigrationsDir)}).\n`,
  );
} catch (error) {
  // A misnamed file, a changed one, a failed one (rolled back: nothing of it is kept) or a role
  // that cannot install: the message says which and what to do.
  if (error instanceof Error) {
    process.stderr.write(`${error.message}\n`);
    process.exitCode = 1;
  } else {
    throw error;
  }
} finally {
  await pool.end();
  await database.close();
}
