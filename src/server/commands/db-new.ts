// `npm run db:new -- <name>`: creates an application migration, APP_MIGRATIONS_DIR (default
// db/app-migrations)/YYYYMMDDHHMMSS_<name>.sql, from the template of a workspace-scoped table
// under row-level security, and says what to do next.
import { createAppMigration, MigrationNameError } from '../db/app-migration-template.js';
import { commandConfig, fail, shownPath } from './db-context.js';

const name = process.argv.slice(2).join(' ');
if (!name.trim()) fail('usage: npm run db:new -- <name>   (for example: npm run db:new -- create_tasks)', 2);
const config = commandConfig();
try {
  const file = createAppMigration(config.appMigrationsDir, name);
  process.stdout.write(
    `created ${shownPath(file)}\n` +
      'Edit it (its header says what to change), then apply it with `npm run db:migrate` ' +
      '(or restart the app); `npm run db:status` lists what is applied and pending.\n',
  );
} catch (error) {
  if (error instanceof MigrationNameError) fail(error.message, 2);
  throw error;
}
