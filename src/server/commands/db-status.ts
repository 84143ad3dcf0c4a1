// `npm run db:status [-- --all]`: lists, per folder, the migrations applied (when) and pending, in
// the order they apply; core ones in full with --all. Exits 1 when an applied file was changed
// since (the service would refuse to start) or a file is misnamed.
import { sameText } from '../db/migrate.js';
import {
  migrationFolders,
  MigrationFileError,
  readMigrations,
  type MigrationFile,
} from '../db/migration-files.js';
import { createPool, poolOptionsFrom } from '../db/pool.js';
import { commandConfig, fail, openCommandDatabase, shownPath } from './db-context.js';

const all = process.argv.slice(2).includes('--all');
const config = commandConfig();
const folders = migrationFolders(config.appMigrationsDir);
let files: MigrationFile[];
try {
  files = readMigrations(folders);
} catch (error) {
  if (error instanceof MigrationFileError) fail(error.message);
  throw error;
}

const database = await openCommandDatabase(config);
const pool = createPool(database.url, { ...poolOptionsFrom(config.database), max: 1 });
let recorded: Map<string, { checksum: string; appliedAt: string }>;
try {
  const table = await pool.query<{ exists: boolean }>(
    `select to_regclass('internal.schema_migrations') is not null as exists`,
  );
  const rows = table.rows[0]?.exists
    ? (
        await pool.query<{ name: string; checksum: string; applied_at: string }>(
          `select name, checksum, to_char(applied_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI:SS') as applied_at
           from internal.schema_migrations`,
        )
      ).rows
    : [];
  recorded = new Map(rows.map((r) => [r.name, { checksum: r.checksum, appliedAt: r.applied_at }]));
} finally {
  await pool.end();
  await database.close();
}

let changed = 0;
const out: string[] = [];
for (const folder of folders) {
  const label = folder.kind === 'core' ? 'Core migrations' : 'Application migrations';
  const shown = shownPath(folder.dir);
  const mine = files.filter((f) => f.kind === folder.kind);
  const lines: string[] = [];
  let applied = 0;
  let pending = 0;
  let newestApplied = '';
  for (const file of mine) {
    const done = recorded.get(file.name);
    recorded.delete(file.name);
    if (!done) {
      pending += 1;
      const late = file.kind === 'app' && file.file < newestApplied;
      lines.push(
        `  pending  ${' '.repeat(19)}  ${file.file}${late ? '  (older than applied ones, from another branch? it applies next all the same)' : ''}`,
      );
    } else if (!sameText(file.name, done.checksum, file.checksum)) {
      changed += 1;
      lines.push(
        `  CHANGED  ${done.appliedAt}  ${file.file}  (edited after it was applied: restore it and write a new migration)`,
      );
    } else {
      applied += 1;
      newestApplied = file.file;
      if (folder.kind === 'app' || all) lines.push(`  applied  ${done.appliedAt}  ${file.file}`);
    }
  }
  // Recorded here but without a file: deleted, from another branch, or from a newer version.
  const prefix = folder.kind === 'app' ? 'app/' : '';
  for (const [name, done] of recorded) {
    if (folder.kind === 'app' ? !name.startsWith(prefix) : name.includes('/')) continue;
    recorded.delete(name);
    lines.push(`  applied  ${done.appliedAt}  ${name.slice(prefix.length)}  (no such file here)`);
  }
  out.push(`${label} (${shown}): ${applied} applied, ${pending} pending`, ...lines);
}
process.stdout.write(`${out.join('\n')}\n`);
if (changed > 0) {
  process.stderr.write(
    `${changed} applied migration(s) changed since they were applied: start-up and db:migrate refuse to run until the files are restored.\n`,
  );
  process.exitCode = 1;
}
