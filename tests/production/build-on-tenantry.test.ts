// docs/build-on-tenantry.md, followed step by step as written: its commands run as the guide
// shows them (against a fresh database, with the migrations folder and the types file in a
// temporary place), its SQL appended to the migration db:new made, its query layer and page
// type-checked against the app and the query layer run, and its supabase-js code run as two users
// of different workspaces. On the new table it proves isolation, the two-step lock, the plan limit,
// the operation and the activity entries.
import { execFile } from 'node:child_process';
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createClient, type RealtimeChannel, type SupabaseClient } from '@supabase/supabase-js';
import ts from 'typescript';
import ws from 'ws';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { registerRuntime } from '../../src/server/runtime.js';
import { loadConfig } from '../../src/server/config.js';
import { startApp, type AppProcess } from '../support/app-process.js';
import { createTestDatabase, randomKey } from '../support/server.js';

const run = promisify(execFile);
const GUIDE = readFileSync('docs/build-on-tenantry.md', 'utf8');

/** The guide's fenced blocks of one language, in order. */
function blocks(language: string): string[] {
  return [...GUIDE.matchAll(new RegExp('```' + language + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

const shell = blocks('sh');
const sql = blocks('sql');
const typescript = blocks('ts');
const tsx = blocks('tsx');

const work = mkdtempSync(path.join(tmpdir(), 'tenantry-guide-'));
const migrations = path.join(work, 'app-migrations');
const types = path.join(work, 'database.ts');
let databaseUrl: string;
let env: Record<string, string>;
let app: AppProcess;
let pool: Pool;

/** Runs one of the guide's shell lines as written, from the project's folder. */
async function command(line: string) {
  const [program, ...args] = line.trim().split(/\s+/);
  return run(program!, args, { env: { ...process.env, ...env }, cwd: process.cwd(), timeout: 120_000 });
}

beforeAll(async () => {
  databaseUrl = await createTestDatabase();
  env = {
    DATABASE_URL: databaseUrl,
    APP_MIGRATIONS_DIR: migrations,
    TYPES_OUTPUT: types,
    JWT_SECRET: randomKey(),
    PROJECT_API_KEY: randomKey('anon_'),
    SERVICE_ROLE_KEY: randomKey('service_'),
    PAYMENT_WEBHOOK_SECRET: randomKey('whsec_'),
    CRON_SECRET: randomKey(),
    LOG_LEVEL: 'warn',
  };
  pool = createPool(databaseUrl);
}, 60_000);
afterAll(async () => {
  await app?.stop();
  await pool?.end();
  rmSync(work, { recursive: true, force: true });
});

describe('the guide, step by step', () => {
  test('its blocks are the ones this test follows', () => {
    expect(shell.map((s) => s.trim().split('\n')[0])).toEqual([
      'npm run db:new -- create_tasks',
      'npm run db:migrate',
      'npm run gen:types',
      'npm run db:lint',
      `FREE_PLAN_LIMITS='{"tasks": 3}'`,
    ]);
    expect([sql.length, typescript.length, tsx.length]).toEqual([3, 3, 1]);
  });

  test('1-5: create the migration, add to it, apply it, generate the types, ask the advisor', async () => {
    const created = await command(shell[0]!);
    const files = readdirSync(migrations);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^\d{14}_create_tasks\.sql$/);
    expect(created.stdout).toContain(files[0]);
    // Step 2's additions, and steps 10 and 11's triggers, which go in before applying too.
    appendFileSync(path.join(migrations, files[0]!), `\n${sql[0]}\n${sql[1]}\n${sql[2]}`);

    const applied = await command(shell[1]!);
    expect(applied.stdout).toContain(`applied app/${files[0]}`);
    const forced = await pool.query(
      `select relrowsecurity, relforcerowsecurity from pg_class where oid = 'public.tasks'::regclass`,
    );
    expect(forced.rows[0]).toEqual({ relrowsecurity: true, relforcerowsecurity: true });

    await command(shell[2]!);
    const generated = readFileSync(types, 'utf8');
    expect(generated).toMatch(/tasks: \{\s*Row: \{/);
    expect(generated).toContain('complete_task');

    // The advisor finds nothing wrong with the new table (it exits non-zero on errors).
    const lint = await command(shell[3]!);
    expect(lint.stdout).not.toContain('public.tasks');
    expect(lint.stdout).toMatch(/0 errors, 0 warnings/);
  }, 240_000);

  test('7: the query layer and the page type-check against the app; the query layer reads as the user', async () => {
    const dir = path.resolve('test-results', `guide-${process.pid}`);
    const queries = path.join(dir, 'lib', 'queries', 'tasks.ts');
    const page = path.join(dir, 'w', '[slug]', 'tasks', 'page.tsx');
    mkdirSync(path.dirname(queries), { recursive: true });
    mkdirSync(path.dirname(page), { recursive: true });
    writeFileSync(queries, typescript[0]!);
    // The page imports the query layer by the path the guide gives it; here it sits beside the test.
    writeFileSync(
      page,
      tsx[0]!.replace(
        "'@/app/lib/queries/tasks'",
        `'${path.relative(path.dirname(page), queries).replace(/\.ts$/, '')}'`,
      ),
    );
    const config = ts.parseJsonConfigFileContent(
      ts.readConfigFile('tsconfig.json', (f) => ts.sys.readFile(f)).config,
      ts.sys,
      process.cwd(),
    );
    const program = ts.createProgram([queries, page], { ...config.options, noEmit: true });
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && (d.file.fileName === queries || d.file.fileName === page))
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(problems).toEqual([]);
    expect(typescript[0]).toContain("from '@/app/lib/db'");
  }, 120_000);
});

describe('8: two users of different workspaces, through supabase-js', () => {
  let ada: SupabaseClient;
  let bob: SupabaseClient;
  let adaWorkspace: string;
  let bobWorkspace: string;

  beforeAll(async () => {
    // Step 6: the plan limit, set as the guide sets it, read when the service starts.
    const limits = /FREE_PLAN_LIMITS='(.*)'/.exec(shell[4]!)![1]!;
    app = await startApp({ ...env, FREE_PLAN_LIMITS: limits, SKIP_WEB: '1' });
    const client = () =>
      createClient(app.url, env.PROJECT_API_KEY!, {
        auth: { persistSession: false, autoRefreshToken: false },
        realtime: { transport: ws as unknown as typeof WebSocket },
      });
    ada = client();
    bob = client();
    for (const [c, email] of [
      [ada, 'ada@example.com'],
      [bob, 'bob@example.com'],
    ] as const) {
      expect((await c.auth.signUp({ email, password: 'correct horse battery' })).error).toBeNull();
    }
    adaWorkspace = ((await ada.rpc('create_workspace', { name: 'Ada Co' })).data as { id: string }).id;
    bobWorkspace = ((await bob.rpc('create_workspace', { name: 'Bob Co' })).data as { id: string }).id;
  }, 180_000);

  /** The guide's supabase-js block, run as `supabase` for a workspace. */
  async function guideReads(supabase: SupabaseClient, workspaceId: string) {
    const body = typescript[1]!.replace(/\btasks!\[0\]!\.id\b/, '(tasks?.[0]?.id ?? null)');
    const js = ts.transpileModule(`return (async () => { ${body}; return { tasks, error, done }; })();`, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.None },
    }).outputText;
    const fn = new Function('supabase', 'workspaceId', js) as (
      s: SupabaseClient,
      w: string,
    ) => Promise<{
      tasks: { id: string; title: string; done_at: string | null }[] | null;
      error: unknown;
      done: unknown;
    }>;
    return fn(supabase, workspaceId);
  }

  test('each reads the tasks of their own workspace and nothing of the other', async () => {
    expect(
      (await ada.from('tasks').insert({ workspace_id: adaWorkspace, title: 'Write the guide' })).error,
    ).toBeNull();
    expect(
      (await bob.from('tasks').insert({ workspace_id: bobWorkspace, title: 'Read the guide' })).error,
    ).toBeNull();
    const adas = await guideReads(ada, adaWorkspace);
    expect(adas.error).toBeNull();
    expect(adas.tasks!.map((t) => t.title)).toEqual(['Write the guide']);
    expect((adas.done as { done_at: string }[])[0]!.done_at).toBeTruthy();
    expect((await guideReads(ada, bobWorkspace)).tasks).toEqual([]);
    const intrusion = await ada.from('tasks').insert({ workspace_id: bobWorkspace, title: 'Sneaky' });
    expect(intrusion.error?.code).toBe('42501');
    // Bob cannot complete Ada's task: the operation runs under his policies.
    const adaTask = adas.tasks![0]!.id;
    const completed = await bob.rpc('complete_task', { task_id: adaTask });
    expect(completed.data).toEqual([]);
  });

  test('the changes are activity entries of the workspace', async () => {
    const { data } = await ada
      .from('activity_events')
      .select('action, subject')
      .eq('workspace_id', adaWorkspace)
      .like('action', 'task.%')
      .order('id');
    expect(data).toEqual([
      { action: 'task.created', subject: 'Write the guide' },
      { action: 'task.updated', subject: 'Write the guide' },
    ]);
  });

  test('the plan limit refuses the fourth task with 402', async () => {
    for (const title of ['Two', 'Three']) {
      expect((await ada.from('tasks').insert({ workspace_id: adaWorkspace, title })).error).toBeNull();
    }
    const fourth = await ada.from('tasks').insert({ workspace_id: adaWorkspace, title: 'Four' });
    expect(fourth.status).toBe(402);
    expect(fourth.error?.message).toBe("This workspace has reached the free plan's limit of 3 tasks");
  });

  test('a workspace that requires two-step verification hides its tasks from a session without it', async () => {
    await pool.query('update public.workspaces set require_mfa = true where id = $1', [adaWorkspace]);
    const { data, error } = await ada.from('tasks').select('title').eq('workspace_id', adaWorkspace);
    expect(error).toBeNull();
    expect(data).toEqual([]);
    await pool.query('update public.workspaces set require_mfa = false where id = $1', [adaWorkspace]);
    expect((await ada.from('tasks').select('title').eq('workspace_id', adaWorkspace)).data).toHaveLength(3);
  });

  test("the guide's query layer reads as the signed-in user", async () => {
    const config = await loadConfig({ ...env });
    registerRuntime({ config, pool } as Parameters<typeof registerRuntime>[0]);
    const queries = path.resolve('test-results', `guide-${process.pid}`, 'lib', 'queries', 'tasks.ts');
    const { workspaceTasks } = (await import(queries)) as {
      workspaceTasks: (user: unknown, workspaceId: string) => Promise<{ title: string }[]>;
    };
    const { data } = await ada.auth.getUser();
    const user = { userId: data.user!.id, claims: { role: 'authenticated', sub: data.user!.id } };
    expect((await workspaceTasks(user, adaWorkspace)).map((t) => t.title).sort()).toEqual([
      'Three',
      'Two',
      'Write the guide',
    ]);
    expect(await workspaceTasks(user, bobWorkspace)).toEqual([]);
  });

  test("10: a task's change is broadcast on its workspace's channel, to its members only", async () => {
    const changed: { title: string; done_at: string | null }[] = [];
    const body = typescript[2]!;
    const js = ts.transpileModule(`return (() => { ${body}; return channel; })();`, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.None },
    }).outputText;
    const channel = (
      new Function('supabase', 'workspaceId', 'onTaskChanged', js) as (
        s: SupabaseClient,
        w: string,
        on: (record: { title: string; done_at: string | null }) => void,
      ) => RealtimeChannel
    )(ada, adaWorkspace, (record) => changed.push(record));
    const deadline = Date.now() + 10_000;
    while (channel.state !== 'joined') {
      if (Date.now() > deadline) throw new Error(`the guide's channel did not join: ${channel.state}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Bob is no member of Ada's workspace: his join is refused.
    const refused = await new Promise<string>((resolve) =>
      bob.channel(`workspace:${adaWorkspace}`, { config: { private: true } }).subscribe((status) => {
        if (status !== 'SUBSCRIBED' && status !== 'CHANNEL_ERROR') return;
        resolve(status);
      }),
    );
    expect(refused).toBe('CHANNEL_ERROR');
    const { data: tasks } = await ada.from('tasks').select('id').eq('title', 'Two');
    expect((await ada.rpc('complete_task', { task_id: tasks![0]!.id })).error).toBeNull();
    while (changed.length === 0) {
      if (Date.now() > deadline + 10_000) throw new Error('no broadcast of the change arrived');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(changed).toHaveLength(1);
    expect(changed[0]!.title).toBe('Two');
    expect(changed[0]!.done_at).toBeTruthy();
    await ada.removeAllChannels();
    await bob.removeAllChannels();
  });

  test('11: a completed task is queued as task.completed for the endpoints subscribed to it', async () => {
    const endpoint = await ada.rpc('create_webhook_endpoint', {
      workspace_id: adaWorkspace,
      url: 'https://hooks.example.com/tasks',
      event_types: ['task.completed'],
    });
    expect(endpoint.error).toBeNull();
    const { data: tasks } = await ada.from('tasks').select('id').eq('title', 'Three');
    expect((await ada.rpc('complete_task', { task_id: tasks![0]!.id })).error).toBeNull();
    const queued = await pool.query<{ event_type: string; payload: { data: { title: string } } }>(
      'select event_type, payload from internal.webhook_messages where workspace_id = $1',
      [adaWorkspace],
    );
    expect(queued.rows.map((r) => [r.event_type, r.payload.data.title])).toEqual([
      ['task.completed', 'Three'],
    ]);
    // Completing it again changes nothing and sends nothing more.
    await ada.rpc('complete_task', { task_id: tasks![0]!.id });
    const again = await pool.query('select 1 from internal.webhook_messages where workspace_id = $1', [
      adaWorkspace,
    ]);
    expect(again.rowCount).toBe(1);
  });
});
