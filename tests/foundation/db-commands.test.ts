// The database command line, each command run as `npm run db:*` in a child process: db:new writes
// an application migration from the template; db:migrate applies it after the core migrations
// (recorded as app/<file>), and a running server serves the new table without a restart, isolated
// per workspace for two users; db:status lists applied and pending and fails on a changed file; a
// misnamed file is refused before anything applies; db:shell answers statements piped on stdin
// through psql or the built-in prompt; db:url prints a URL that connects, for DATABASE_URL and for
// the embedded database (started for as long as the command runs when it was not running); the
// process applies application migrations at start-up.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestDatabase, randomKey, startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace } from '../support/workspaces.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const children: ChildProcess[] = [];
const folders: string[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

function tempFolder(label: string): string {
  const folder = mkdtempSync(path.join(tmpdir(), `tenantry-${label}-`));
  // The embedded server runs as the postgres user when tests run as root: it must enter the folder.
  chmodSync(folder, 0o755);
  folders.push(folder);
  return folder;
}

/** This process's environment with env on top; a variable set to undefined is left out. */
function environment(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const all: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...env };
  for (const [name, value] of Object.entries(all)) if (value === undefined) delete all[name];
  return all;
}

/** `npm run <script> -- args` with env on top of this process's, stdin piped in; resolves when it exits. */
function npmRun(
  script: string,
  args: string[],
  env: Record<string, string | undefined>,
  input = '',
): Promise<Run> {
  const child = spawn('npm', ['run', '--silent', script, ...(args.length ? ['--', ...args] : [])], {
    env: environment(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin!.end(input);
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

async function eventually<T>(probe: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error('gave up waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('application migrations through db:new, db:migrate and db:status', () => {
  let server: TestServer;
  let databaseUrl: string;
  let appDir: string;
  let env: Record<string, string>;
  let file: string;

  beforeAll(async () => {
    server = await startTestServer();
    databaseUrl = server.config.databaseUrl!;
    appDir = path.join(tempFolder('app-migrations'), 'app-migrations');
    // Only the database: the commands need no secrets.
    env = { DATABASE_URL: databaseUrl, APP_MIGRATIONS_DIR: appDir };
  });
  afterAll(async () => server?.close());

  test('db:new writes a timestamped file from the template; a bad name is refused and writes nothing', async () => {
    const refused = await npmRun('db:new', ["tasks'; drop table x"], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/A migration name is/);
    expect(existsSync(appDir)).toBe(false);

    const made = await npmRun('db:new', ['create_tasks'], env);
    expect(made.code, made.stderr).toBe(0);
    const files = readdirSync(appDir);
    expect(files).toHaveLength(1);
    file = files[0]!;
    expect(file).toMatch(/^\d{14}_create_tasks\.sql$/);
    expect(made.stdout).toContain(file);
    const sql = readFileSync(path.join(appDir, file), 'utf8');
    expect(sql).toContain('create table public.tasks (');
    expect(sql).toContain('references public.workspaces (id) on delete cascade');
    expect(sql).toContain('on public.tasks (workspace_id, created_at desc)');
    expect(sql).toContain('alter table public.tasks force row level security;');
    expect(sql).toContain(
      "for select to authenticated\n  using (workspace_id = any ((select tenantry.workspace_ids('viewer'))::uuid[]))",
    );
    expect(sql).toContain(
      "with check (workspace_id = any ((select tenantry.workspace_ids('member'))::uuid[]))",
    );
    expect(sql).toContain(
      'grant insert (workspace_id, title), update (title) on public.tasks to authenticated;',
    );

    const status = await npmRun('db:status', [], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/Core migrations \(.*\): \d+ applied, 0 pending/);
    expect(status.stdout).toMatch(new RegExp(`: 0 applied, 1 pending\\n  pending +${file}`));
  });

  test('db:migrate applies it after the core migrations; a running server serves it at once, isolated per workspace', async () => {
    const [ada, grace] = await Promise.all([signUp(server, 'ada'), signUp(server, 'grace')]);
    const [adaSpace, graceSpace] = await Promise.all([
      workspace(server, ada, 'Ada Co'),
      workspace(server, grace, 'Grace Co'),
    ]);
    // The server has its schema cache loaded, and no such table in it.
    const before = await ada.client.from('tasks').select('*');
    expect(before.error?.code).toBe('PGRST205');

    const run = await npmRun('db:migrate', [], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`applied app/${file}`);
    const recorded = await query<{ name: string }>(
      databaseUrl,
      `select name from internal.schema_migrations where name like 'app/%'`,
    );
    expect(recorded.map((r) => r.name)).toEqual([`app/${file}`]);
    const [table] = await query<{ rls: boolean; forced: boolean }>(
      databaseUrl,
      `select relrowsecurity as rls, relforcerowsecurity as forced from pg_class where oid = 'public.tasks'::regclass`,
    );
    expect(table).toEqual({ rls: true, forced: true });

    // No restart: the NOTIFY reloads the running server's schema cache.
    await eventually(async () => ((await ada.client.from('tasks').select('*')).error ? undefined : true));
    const adaInsert = await ada.client
      .from('tasks')
      .insert({ workspace_id: adaSpace, title: 'Ada’s' })
      .select();
    expect(adaInsert.error).toBeNull();
    expect(
      (await grace.client.from('tasks').insert({ workspace_id: graceSpace, title: 'Grace’s' })).error,
    ).toBeNull();
    const intrusion = await ada.client.from('tasks').insert({ workspace_id: graceSpace, title: 'Not mine' });
    expect(intrusion.error?.code).toBe('42501');
    expect((await ada.client.from('tasks').select('title')).data).toEqual([{ title: 'Ada’s' }]);
    expect((await grace.client.from('tasks').select('title')).data).toEqual([{ title: 'Grace’s' }]);
    // Grace cannot change or delete Ada's row: it is not hers to see.
    const taskId = (adaInsert.data as { id: string }[])[0]!.id;
    const del = await grace.client.from('tasks').delete().eq('id', taskId).select();
    expect(del.data).toEqual([]);
    // A column the template does not grant is refused.
    const forged = await ada.client
      .from('tasks')
      .insert({ workspace_id: adaSpace, title: 'x', created_by: grace.id });
    expect(forged.error?.code).toBe('42501');

    const again = await npmRun('db:migrate', [], env);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/Nothing to apply/);
  }, 60_000);

  test('db:status lists it as applied, and exits 1 when an applied file was changed', async () => {
    const status = await npmRun('db:status', [], env);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(
      new RegExp(`: 1 applied, 0 pending\\n  applied  \\d{4}-\\d\\d-\\d\\d [\\d:]{8}  ${file}`),
    );

    const full = path.join(appDir, file);
    const text = readFileSync(full, 'utf8');
    writeFileSync(full, `${text}\n-- edited afterwards\n`);
    try {
      const changed = await npmRun('db:status', [], env);
      expect(changed.code).toBe(1);
      expect(changed.stdout).toContain(`CHANGED`);
      expect(changed.stderr).toMatch(/changed since they were applied/);
      const refused = await npmRun('db:migrate', [], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`app/${file} was changed after it was applied`);
    } finally {
      writeFileSync(full, text);
    }
  }, 60_000);

  test('a misnamed application file (a core-style name) stops db:migrate before anything applies', async () => {
    const next = await npmRun('db:new', ['create notes'], env);
    expect(next.code).toBe(0);
    // Its optional activity and plan-limit triggers taken up, as the template says.
    const notes = path.join(
      appDir,
      readdirSync(appDir).find((f) => f.endsWith('_create_notes.sql'))!,
    );
    writeFileSync(
      notes,
      readFileSync(notes, 'utf8').replace(/^-- (create trigger .*)\n--( {3}for each row .*)$/gm, '$1\n$2'),
    );
    writeFileSync(path.join(appDir, '0001_roles_and_auth.sql'), 'create table public.collides (id int);');
    try {
      const count = async () =>
        (
          await query<{ n: number }>(databaseUrl, 'select count(*)::int as n from internal.schema_migrations')
        )[0]!.n;
      const before = await count();
      const run = await npmRun('db:migrate', [], env);
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/must be named YYYYMMDDHHMMSS_name\.sql.*0001_roles_and_auth\.sql/);
      expect(await count()).toBe(before);
      expect(await query(databaseUrl, `select to_regclass('public.notes') as t`)).toEqual([{ t: null }]);
    } finally {
      rmSync(path.join(appDir, '0001_roles_and_auth.sql'));
    }
    const status = await npmRun('db:status', [], env);
    expect(status.stdout).toMatch(/: 1 applied, 1 pending\n/);
    expect(status.stdout).toMatch(/pending +\d{14}_create_notes\.sql/);
    const run = await npmRun('db:migrate', [], env);
    expect(run.code, run.stderr).toBe(0);
    expect(await query(databaseUrl, `select to_regclass('public.notes')::text as t`)).toEqual([
      { t: 'notes' },
    ]);
    const triggers = await query<{ tgname: string }>(
      databaseUrl,
      `select tgname from pg_trigger where tgrelid = 'public.notes'::regclass and not tgisinternal order by 1`,
    );
    expect(triggers.map((t) => t.tgname)).toEqual(['notes_activity', 'notes_plan_limit']);
  }, 60_000);
});

describe('db:shell and db:url on DATABASE_URL', () => {
  let databaseUrl: string;
  beforeAll(async () => {
    databaseUrl = await createTestDatabase();
  });

  test('the built-in prompt answers statements piped on stdin, shows an error and goes on', async () => {
    const run = await npmRun(
      'db:shell',
      [],
      { DATABASE_URL: databaseUrl, DB_SHELL: 'builtin' },
      'select 1 as one;\nselect nope;\n\\dt\nselect 40 + 2 as answer, null as nothing',
    );
    expect(run.stdout).toContain(' one \n-----\n   1\n(1 row)\n');
    expect(run.stderr).toContain('ERROR:  column "nope" does not exist');
    expect(run.stdout).toMatch(/ public +\| workspaces +\| t +\| t/);
    // The last statement ran at the end of input, without its semicolon.
    expect(run.stdout).toMatch(/ answer \| nothing \n--------\+---------\n +42 \|\n\(1 row\)/);
    expect(run.code).toBe(1); // piped input with an error
  });

  test.skipIf(!process.env.PATH?.split(':').some((d) => existsSync(path.join(d, 'psql'))))(
    'psql, when it is installed, is opened on the database',
    async () => {
      const run = await npmRun('db:shell', [], { DATABASE_URL: databaseUrl }, 'select 40 + 2 as answer;\n');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/answer\s*\n-+\n\s+42\n\(1 row\)/);
    },
  );

  test('db:url prints DATABASE_URL; a bad DATABASE_URL is named', async () => {
    const run = await npmRun('db:url', [], { DATABASE_URL: databaseUrl });
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(databaseUrl);
    expect(await query(run.stdout.trim(), 'select 1 as one')).toEqual([{ one: 1 }]);
    const bad = await npmRun('db:url', [], { DATABASE_URL: 'mysql://nope' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('DATABASE_URL');
    const shell = await npmRun('db:shell', [], { DATABASE_URL: databaseUrl, DB_SHELL: 'sqlite' });
    expect(shell.code).toBe(2);
    expect(shell.stderr).toContain('DB_SHELL must be psql or builtin');
  });
});

describe('the embedded database has a URL and a shell', () => {
  test('db:url starts it when it is not running and keeps it until stopped; while it runs, db:url and db:shell find it', async () => {
    const dataDir = path.join(tempFolder('embedded'), 'data');
    // No DATABASE_URL: the embedded database under DATA_DIR.
    const env = { DATA_DIR: dataDir, DATABASE_URL: undefined };
    // A group of its own, as a terminal's foreground job is: Ctrl-C signals the whole group.
    const child = spawn('npm', ['run', '--silent', 'db:url'], {
      env: environment(env),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const url = await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`db:url exited: ${stderr}`);
      return stdout.includes('\n') ? stdout.split('\n')[0] : undefined;
    }, 60_000);
    expect(url).toMatch(/^postgres:\/\/postgres:[^@]+@127\.0\.0\.1:\d+\/tenantry$/);
    expect(stderr).toMatch(/until you press Ctrl-C/);
    expect(await query(url, 'select current_database() as db')).toEqual([{ db: 'tenantry' }]);

    const again = await npmRun('db:url', [], env);
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe(url);
    const shell = await npmRun(
      'db:shell',
      [],
      { ...env, DB_SHELL: 'builtin' },
      'select current_database();\n',
    );
    expect(shell.code, shell.stderr).toBe(0);
    expect(shell.stdout).toContain(' tenantry\n(1 row)');
    expect(shell.stderr).not.toContain('was not running');

    process.kill(-child.pid!, 'SIGINT'); // Ctrl-C
    await exited;
    await eventually(async () =>
      existsSync(path.join(dataDir, 'postgres', 'postmaster.pid')) ? undefined : true,
    );

    // Not running: db:shell runs it for its session only.
    const session = await npmRun('db:shell', [], { ...env, DB_SHELL: 'builtin' }, 'select 7 as seven;\n');
    expect(session.code, session.stderr).toBe(0);
    expect(session.stderr).toContain('runs for this session');
    expect(session.stdout).toContain('     7\n(1 row)');
    await eventually(async () =>
      existsSync(path.join(dataDir, 'postgres', 'postmaster.pid')) ? undefined : true,
    );
  }, 120_000);
});

test('start-up applies the application migrations after the core ones', async () => {
  const appDir = tempFolder('startup-app');
  writeFileSync(
    path.join(appDir, '20250101000000_create_notes.sql'),
    `create table public.notes (id int primary key, workspace_id uuid references public.workspaces (id));`,
  );
  const databaseUrl = await createTestDatabase();
  const port = await new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server/main.ts'], {
    env: {
      ...process.env,
      SKIP_WEB: '1',
      LOG_LEVEL: 'warn',
      DATABASE_URL: databaseUrl,
      APP_MIGRATIONS_DIR: appDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      APP_URL: `http://localhost:${port}`,
      MAIL_DELIVERY: 'outbox',
      JWT_SECRET: randomKey(),
      PROJECT_API_KEY: randomKey('anon_'),
      SERVICE_ROLE_KEY: randomKey('service_'),
      PAYMENT_WEBHOOK_SECRET: randomKey('whsec_'),
      CRON_SECRET: randomKey(),
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await eventually(async () => {
    const ready = await fetch(`http://127.0.0.1:${port}/api/health/ready`).catch(() => undefined);
    return ready?.ok ? true : undefined;
  }, 30_000);
  const rows = await query<{ name: string }>(
    databaseUrl,
    `select name from internal.schema_migrations order by applied_at desc, name desc limit 1`,
  );
  expect(rows).toEqual([{ name: 'app/20250101000000_create_notes.sql' }]);
  child.kill('SIGTERM');
  await exited;
}, 60_000);
