// In charge of which migration files there are and the one order they apply in: every core file
// (db/migrations, NNNN_name.sql, recorded under its own name) before every application file
// (db/app-migrations, YYYYMMDDHHMMSS_name.sql, recorded as app/<file>), each folder in name order
// (decision 0061). Reading the files is all it does; migrate.ts applies them.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** The product's own migrations, shipped with each version. */
export const CORE_MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'db/migrations');

/** The team's migrations, unless APP_MIGRATIONS_DIR names another folder. */
export const DEFAULT_APP_MIGRATIONS_DIR = path.join(PROJECT_ROOT, 'db/app-migrations');

/** Application files are named by the second they were created: they sort after each other and never take a core name. */
export const APP_MIGRATION_NAME = /^(\d{14})_([a-z0-9_]+)\.sql$/;

/** Recorded names of application migrations start with this, so none can equal a core file's name. */
export const APP_RECORD_PREFIX = 'app/';

export interface MigrationFolder {
  kind: 'core' | 'app';
  dir: string;
}

export interface MigrationFile {
  kind: 'core' | 'app';
  /** the file's name in its folder */
  file: string;
  /** the name it is recorded under in internal.schema_migrations */
  name: string;
  path: string;
  sql: string;
  /** sha256 of the text, hex */
  checksum: string;
}

export class MigrationFileError extends Error {
  override name = 'MigrationFileError';
}

/** The folders start-up and `npm run db:migrate` apply, core first. */
export function migrationFolders(appDir: string = DEFAULT_APP_MIGRATIONS_DIR): MigrationFolder[] {
  return [
    { kind: 'core', dir: CORE_MIGRATIONS_DIR },
    { kind: 'app', dir: appDir },
  ];
}

export function checksumOf(sql: string): string {
  return createHash('sha256').update(sql).digest('hex');
}

/**
 * Every .sql file of the folders, in the order they apply. A missing application folder is an
 * empty one (a team may delete it); a misnamed application file stops everything before anything
 * runs, since its place in the order would be a guess.
 */
export function readMigrations(folders: readonly MigrationFolder[]): MigrationFile[] {
  const order: MigrationFile[] = [];
  for (const folder of folders) {
    if (folder.kind === 'app' && !existsSync(folder.dir)) continue;
    const files = readdirSync(folder.dir)
      .filter((f) => f.endsWith('.sql'))
      .sort();
    if (folder.kind === 'app') {
      const misnamed = files.filter((f) => !APP_MIGRATION_NAME.test(f));
      if (misnamed.length > 0) {
        throw new MigrationFileError(
          `Application migrations must be named YYYYMMDDHHMMSS_name.sql (lower-case letters, digits and _): ` +
            `${misnamed.map((f) => path.join(folder.dir, f)).join(', ')}. ` +
            'Create them with `npm run db:new -- <name>`.',
        );
      }
    }
    for (const file of files) {
      const full = path.join(folder.dir, file);
      const sql = readFileSync(full, 'utf8');
      order.push({
        kind: folder.kind,
        file,
        name: folder.kind === 'app' ? APP_RECORD_PREFIX + file : file,
        path: full,
        sql,
        checksum: checksumOf(sql),
      });
    }
  }
  return order;
}
