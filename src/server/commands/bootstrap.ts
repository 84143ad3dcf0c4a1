// In charge of what every command-line tool needs before it can work: validated configuration,
// the database (DATABASE_URL, the embedded server `npm start` is running, or our own embedded
// one), migrations, a pool and a logger, and a way to release them.
import { ConfigError, loadConfig, type Config } from '../config.js';
import { openDatabase } from '../db/database.js';
import { migrate } from '../db/migrate.js';
import { migrationFolders } from '../db/migration-files.js';
import { createPool, poolOptionsFrom, type Pool } from '../db/pool.js';
import { createLogger, type Logger } from '../logger.js';

export interface CommandContext {
  config: Config;
  pool: Pool;
  logger: Logger;
  close(): Promise<void>;
}

export async function bootstrapCommand(): Promise<CommandContext> {
  let config: Config;
  try {
    config = await loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(process.env.LOG_LEVEL ?? 'warn');
  const database = await openDatabase(config);
  const pool = createPool(database.url, { ...poolOptionsFrom(config.database), max: 4 });
  await migrate(pool, migrationFolders(config.appMigrationsDir));
  return {
    config,
    pool,
    logger,
    close: async () => {
      await pool.end();
      await database.stop();
    },
  };
}

/** Reads `--name value` from argv. */
export function option(argv: string[], name: string): string | undefined {
  const index = argv.indexOf(`--${name}`);
  if (index >= 0) return argv[index + 1];
  const inline = argv.find((a) => a.startsWith(`--${name}=`));
  return inline?.slice(name.length + 3);
}
