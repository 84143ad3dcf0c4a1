// In charge of the built-in SQL prompt `npm run db:shell` opens where psql is not installed: it
// reads statements typed or piped on stdin, runs each on one connection (so a transaction spans
// statements), prints rows as aligned tables and errors without stopping; \q quits, \? helps.
import { createInterface } from 'node:readline';
import pg from 'pg';
import { endsStatement, formatResult } from './sql-text.js';

export interface PromptStreams {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream;
  errors: NodeJS.WritableStream;
}

const HELP = [
  '  \\q     quit (Ctrl-D does too)',
  '  \\dt    list tables, with whether row-level security is enabled and forced',
  '  \\?     this help',
  '  A statement runs when a line ends it with ;. Ctrl-C clears what was typed, or cancels a',
  '  running statement.',
].join('\n');

const LIST_TABLES = `select n.nspname as schema, c.relname as name,
  c.relrowsecurity as rls, c.relforcerowsecurity as rls_forced
from pg_class c join pg_namespace n on n.oid = c.relnamespace
where c.relkind in ('r', 'p') and n.nspname not in ('pg_catalog', 'information_schema')
  and n.nspname not like 'pg_toast%'
order by 1, 2`;

function describeError(error: unknown): string {
  const e = error as Partial<pg.DatabaseError> & Error;
  const lines = [`ERROR:  ${e.message}`];
  if (e.detail) lines.push(`DETAIL:  ${e.detail}`);
  if (e.hint) lines.push(`HINT:  ${e.hint}`);
  return `${lines.join('\n')}\n`;
}

/** Asks the server, on a second connection, to cancel what the prompt's connection is running. */
async function cancel(url: string, pid: number): Promise<void> {
  const other = new pg.Client({ connectionString: url });
  try {
    await other.connect();
    await other.query('select pg_cancel_backend($1)', [pid]);
  } catch {
    // the statement ends by itself, or the server is gone: either way nothing to cancel
  } finally {
    await other.end().catch(() => undefined);
  }
}

/** Runs the prompt until \q or the end of input; returns the exit code (1 if piped input had an error). */
export async function runPrompt(url: string, streams: PromptStreams): Promise<number> {
  const { input, output, errors } = streams;
  // Values exactly as the server writes them, as psql shows them (no Date or number conversions).
  const client = new pg.Client({ connectionString: url, types: { getTypeParser: () => (v: string) => v } });
  client.on('error', (error) => errors.write(describeError(error)));
  await client.connect();
  const who = await client.query<{ db: string; pid: string }>(
    'select current_database() as db, pg_backend_pid()::text as pid',
  );
  const { db, pid } = who.rows[0]!;
  const interactive = Boolean(input.isTTY);
  const rl = createInterface({ input, output, terminal: interactive, prompt: `${db}=> ` });
  let buffer = '';
  let running = false;
  let failures = 0;
  rl.on('SIGINT', () => {
    if (running) {
      void cancel(url, Number(pid));
      return;
    }
    buffer = '';
    output.write('\n');
    rl.setPrompt(`${db}=> `);
    rl.prompt();
  });
  const run = async (text: string) => {
    running = true;
    try {
      const results = (await client.query({ text, rowMode: 'array' })) as pg.QueryResult | pg.QueryResult[];
      for (const result of Array.isArray(results) ? results : [results])
        output.write(`${formatResult(result)}\n`);
    } catch (error) {
      failures += 1;
      errors.write(describeError(error));
    } finally {
      running = false;
    }
  };
  if (interactive) {
    errors.write(`Connected to ${db} (built-in prompt). \\? lists its commands, \\q quits.\n`);
    rl.prompt();
  }
  for await (const line of rl) {
    const command = line.trim();
    if (!buffer.trim() && command.startsWith('\\')) {
      if (command === '\\q') break;
      if (command === '\\?') output.write(`${HELP}\n`);
      else if (command === '\\dt') await run(LIST_TABLES);
      else {
        failures += 1;
        errors.write(`Unknown command ${command}: \\? lists the commands.\n`);
      }
    } else {
      buffer += buffer ? `\n${line}` : line;
      if (endsStatement(buffer)) {
        const text = buffer;
        buffer = '';
        await run(text);
      }
    }
    if (interactive) {
      rl.setPrompt(buffer.trim() ? `${db}-> ` : `${db}=> `);
      rl.prompt();
    }
  }
  // As psql does, what is left at the end of piped input runs without its closing semicolon.
  if (buffer.trim()) await run(buffer);
  rl.close();
  await client.end().catch(() => undefined);
  return !interactive && failures > 0 ? 1 : 0;
}
