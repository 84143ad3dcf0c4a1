// What one data-API request may cost: statement timeout, idle-in-transaction timeout, rows per
// response and per embed, response size, bounded filter inputs, control characters in names, and
// a broken connection failing only its own request. Each limit is set low here so the hostile
// request is cheap to make; the defaults are exercised by the hostile-neighbour test.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { withReadTimeout, withRls, withService } from '../../src/server/db/transactions.js';
import pg from 'pg';
import { prepare } from '../../src/server/data-api/execute.js';
import { parseApiRequest } from '../../src/server/data-api/request.js';
import { SchemaCache } from '../../src/server/data-api/schema-cache.js';
import { createLogger } from '../../src/server/logger.js';
import { call, createTestDatabase, startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';

let server: TestServer;
let owner: SignedIn;
let ws: string;

const PROJECTS = 30;
const DESCRIPTION = 'd'.repeat(1000);

beforeAll(async () => {
  // A function that takes as long as it is told to, callable by signed-in users.
  const databaseUrl = await createTestDatabase();
  const admin = new pg.Client({ connectionString: databaseUrl });
  await admin.connect();
  await admin.query(`
    create function public.take_time(seconds float8) returns boolean language sql as
      $$ select true from pg_sleep(seconds) $$;
    grant execute on function public.take_time(float8) to authenticated`);
  // The least working memory PostgreSQL allows, so that anything held in memory for a statement
  // shows up as a temporary file in the plan.
  await admin.query(
    `alter database ${pg.escapeIdentifier(new URL(databaseUrl).pathname.slice(1))} set work_mem = '64kB'`,
  );
  await admin.end();
  server = await startTestServer({
    DATABASE_URL: databaseUrl,
    STATEMENT_TIMEOUT_MS: '400',
    IDLE_IN_TRANSACTION_TIMEOUT_MS: '600',
    DATA_API_MAX_ROWS: '10',
    DATA_API_MAX_RESPONSE_BYTES: '100000',
    DATA_API_MAX_PATTERN_LENGTH: '40',
    DATA_API_MAX_FILTER_TERMS: '8',
  });
  owner = await signUp(server, 'limits');
  ws = await workspace(server, owner, 'Limits');
  const rows = Array.from({ length: PROJECTS }, (_, i) => ({
    workspace_id: ws,
    name: `p${String(i).padStart(2, '0')}`,
    description: DESCRIPTION,
  }));
  const { error } = await owner.client.from('projects').insert(rows);
  if (error) throw new Error(error.message);
});
afterAll(async () => server?.close());

function get(path: string, headers: Record<string, string> = {}) {
  return call(server, 'GET', `/rest/v1${path}`, {
    headers: { authorization: `Bearer ${owner.accessToken}`, ...headers },
  });
}

async function idleInTransaction(): Promise<number> {
  const r = await server.pool.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity
     where datname = current_database() and state like 'idle in transaction%'`,
  );
  return r.rows[0]!.n;
}

describe('time', () => {
  test('a statement running longer than the timeout is cancelled: 500 57014, connection reused', async () => {
    const res = await call(server, 'POST', '/rest/v1/rpc/take_time', {
      body: { seconds: 5 },
      headers: { authorization: `Bearer ${owner.accessToken}` },
    });
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({
      code: '57014',
      message: 'canceling statement due to statement timeout',
    });
    expect(await idleInTransaction()).toBe(0);
    const ok = await call(server, 'POST', '/rest/v1/rpc/take_time', {
      body: { seconds: 0.01 },
      headers: { authorization: `Bearer ${owner.accessToken}` },
    });
    expect(ok.status).toBe(200);
  });

  test('trusted server work is not bound by the callers’ statement timeout', async () => {
    const slept = await withService(server.pool, async (tx) => {
      const r = await tx.query<{ ok: boolean }>('select true as ok from pg_sleep(0.6)');
      return r.rows[0]!.ok;
    });
    expect(slept).toBe(true);
  });

  test('a connection left idle inside a transaction is closed by the database', async () => {
    const client = await server.pool.connect();
    const ended: Error[] = [];
    client.on('error', (error) => ended.push(error));
    try {
      const setting = await client.query<{ v: string }>(
        `select current_setting('idle_in_transaction_session_timeout') as v`,
      );
      expect(setting.rows[0]!.v).toBe('600ms');
      await client.query('begin');
      await new Promise((resolve) => setTimeout(resolve, 1200));
      await expect(client.query('select 1')).rejects.toThrow();
      expect(ended.map((e) => (e as { code?: string }).code)).toContain('25P03');
    } finally {
      client.release(true);
    }
    expect(await idleInTransaction()).toBe(0);
  });

  test('a connection that stops answering fails its own request and is destroyed, not reused', async () => {
    let stuckPid = 0;
    await expect(
      withRls(server.pool, { role: 'authenticated', sub: owner.id }, async (tx) => {
        stuckPid = (await tx.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
        // The driver stops reading this connection, as after a result it could not parse.
        (tx as unknown as { connection: { stream: { pause(): void } } }).connection.stream.pause();
        return tx.query(withReadTimeout('select 1', 200));
      }),
    ).rejects.toThrow(/timeout/i);
    // The backend went away with its transaction; nothing is left holding a connection.
    const alive = await server.pool.query('select 1 from pg_stat_activity where pid = $1', [stuckPid]);
    expect(alive.rowCount).toBe(0);
    expect(await idleInTransaction()).toBe(0);
  });

  test('a statement the driver stops waiting for is cancelled in the database, not left running', async () => {
    let pid = 0;
    const started = Date.now();
    // Trusted work has no statement timeout: without a cancel this sleep would run on for 30 s.
    await expect(
      withService(server.pool, async (tx) => {
        pid = (await tx.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
        return tx.query(withReadTimeout('select pg_sleep(30)', 300));
      }),
    ).rejects.toMatchObject({ name: 'StatementAbandoned', code: '57014' });
    expect(Date.now() - started).toBeLessThan(5000);
    await expect
      .poll(
        async () =>
          (
            await server.pool.query('select 1 from pg_stat_activity where pid = $1 and state = $2', [
              pid,
              'active',
            ])
          ).rowCount,
        { timeout: 2000 },
      )
      .toBe(0);
  });
});

describe('rows', () => {
  test('a response carries at most DATA_API_MAX_ROWS rows, and says how many there are', async () => {
    const all = await get(`/projects?select=name&workspace_id=eq.${ws}&order=name`);
    expect(all.status).toBe(200);
    expect(all.body).toHaveLength(10);
    const counted = await get(`/projects?select=name&workspace_id=eq.${ws}`, { prefer: 'count=exact' });
    expect(counted.status).toBe(206);
    expect(counted.headers.get('content-range')).toBe(`0-9/${PROJECTS}`);
    const fewer = await get(`/projects?select=name&workspace_id=eq.${ws}&limit=3`);
    expect(fewer.body).toHaveLength(3);
    const more = await get(`/projects?select=name&workspace_id=eq.${ws}&limit=25`);
    expect(more.body).toHaveLength(10);
    const paged = await get(`/projects?select=name&workspace_id=eq.${ws}&order=name&offset=25&limit=25`);
    expect((paged.body as unknown as { name: string }[]).map((p) => p.name)).toEqual([
      'p25',
      'p26',
      'p27',
      'p28',
      'p29',
    ]);
  });

  test('every embedded array, at any depth, is capped too', async () => {
    const res = await get(`/workspaces?select=id,projects(id,workspaces(projects(id)))&id=eq.${ws}`);
    expect(res.status).toBe(200);
    const [row] = res.body as unknown as { projects: { workspaces: { projects: unknown[] } }[] }[];
    expect(row!.projects).toHaveLength(10);
    expect(row!.projects[0]!.workspaces.projects).toHaveLength(10);
    const limited = await get(`/workspaces?select=id,projects(id)&id=eq.${ws}&projects.limit=50`);
    expect((limited.body as unknown as { projects: unknown[] }[])[0]!.projects).toHaveLength(10);
  });
});

describe('size', () => {
  test('the nested self-embed that multiplied rows is refused with a clear error, not a hang', async () => {
    const res = await get(
      `/projects?select=d:description,w:workspaces(p:projects(d:description))&workspace_id=eq.${ws}`,
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'TNTRY413' });
    expect(String((res.body as { message: string }).message)).toMatch(
      /more than \d+ bytes; the limit is 100000/,
    );
    expect(await idleInTransaction()).toBe(0);
    // The same connections go on serving.
    expect((await get(`/projects?select=name&limit=1&workspace_id=eq.${ws}`)).status).toBe(200);
  });

  /** The statement the data API runs for `select`, with these limits, as the owner. */
  async function statementFor(select: string, maxRows: number, maxResponseBytes: number) {
    const schema = await new SchemaCache(server.pool, createLogger('silent')).get();
    const request = parseApiRequest(
      'GET',
      '/projects',
      new URLSearchParams(`select=${select}&workspace_id=eq.${ws}`),
      new Headers(),
    );
    return prepare(schema, request, undefined, {
      maxRows,
      maxResponseBytes,
      maxPatternLength: 40,
      maxFilterTerms: 8,
    }).query;
  }
  const asOwner = <T>(work: (tx: pg.PoolClient) => Promise<T>) =>
    withRls(server.pool, { role: 'authenticated', sub: owner.id }, work);
  const selfEmbed = 'd:description,w:workspaces(p:projects(d:description))';

  test('an oversized body is measured as it is made, never copied to a temporary file', async () => {
    // 30 rows of three 1000-character columns: about 90 kB, more than the database's working
    // memory (64 kB here) and than this limit, explained with its actual run.
    const query = await statementFor('a:description,b:description,c:description', 30, 50_000);
    const plan = await asOwner(async (tx) => {
      const r = await tx.query<{ 'QUERY PLAN': unknown }>(
        `explain (analyze, buffers, format json) ${query.text}`,
        query.values as unknown[],
      );
      return r.rows[0]!['QUERY PLAN'];
    });
    const tempBlocks = (node: unknown): number => {
      if (Array.isArray(node)) return node.reduce((sum: number, n) => sum + tempBlocks(n), 0);
      if (!node || typeof node !== 'object') return 0;
      return Object.entries(node).reduce(
        (sum, [key, value]) => sum + (key === 'Temp Written Blocks' ? Number(value) : tempBlocks(value)),
        0,
      );
    };
    expect(query.text).toContain('octet_length');
    expect(JSON.stringify(plan)).toContain('Temp Written Blocks');
    expect(tempBlocks(plan)).toBe(0);
  });

  test('embeds multiplied by embeds stop at the limit instead of building the whole body', async () => {
    // 30 projects, each with its workspace's 30 projects: a body of about 930 kB.
    const whole = await statementFor(selfEmbed, 30, 10_000_000);
    const full = await asOwner((tx) =>
      tx.query<{ body_bytes: number }>(whole.text, whole.values as unknown[]),
    );
    expect(Number(full.rows[0]!.body_bytes)).toBeGreaterThan(900_000);

    // With a limit of 100 kB the statement stops once its embeds add up to more than that: after
    // four of the thirty rows, each about 31 kB.
    const limited = await statementFor(selfEmbed, 30, 100_000);
    const stopped = await asOwner((tx) => tx.query(limited.text, limited.values as unknown[])).then(
      () => null,
      (error: { code?: string; detail?: string }) => error,
    );
    expect(stopped?.code).toBe('TN413');
    const { bytes, max } = JSON.parse(stopped!.detail!) as { bytes: number; max: number };
    expect(max).toBe(100_000);
    expect(bytes).toBeGreaterThan(100_000);
    expect(bytes).toBeLessThan(140_000);

    // Nothing that fits is refused early: the same body under a limit of exactly its size.
    const exact = await statementFor(selfEmbed, 30, Number(full.rows[0]!.body_bytes));
    const fits = await asOwner((tx) =>
      tx.query<{ body: string | null }>(exact.text, exact.values as unknown[]),
    );
    expect(fits.rows[0]!.body).not.toBeNull();
    expect(JSON.parse(fits.rows[0]!.body!)).toHaveLength(30);
  });

  test('a write whose answer would be too large changes nothing', async () => {
    const res = await call(
      server,
      'PATCH',
      `/rest/v1/projects?workspace_id=eq.${ws}&select=name,workspaces(projects(description))`,
      {
        body: { description: 'changed' },
        headers: { authorization: `Bearer ${owner.accessToken}`, prefer: 'return=representation' },
      },
    );
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'TNTRY413' });
    const changed = await get(`/projects?select=name&workspace_id=eq.${ws}&description=eq.changed`);
    expect(changed.body).toEqual([]);
  });
});

describe('filter inputs', () => {
  test('a pattern longer than the limit is refused, naming the limit', async () => {
    const long = 'x'.repeat(41);
    const res = await get(`/projects?description=like.*${long}*&workspace_id=eq.${ws}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'PGRST100' });
    expect(JSON.stringify(res.body)).toContain('DATA_API_MAX_PATTERN_LENGTH');
    const inOr = await get(`/projects?or=(name.eq.a,description.ilike.*${long}*)`);
    expect(inOr.status).toBe(400);
    const fine = await get(
      `/projects?select=name&description=like.*${'d'.repeat(30)}*&workspace_id=eq.${ws}`,
    );
    expect(fine.status).toBe(200);
  });

  test('too many conditions, counting every or/and term, are refused, naming the limit', async () => {
    const terms = Array.from({ length: 9 }, (_, i) => `name.eq.p${i}`).join(',');
    const res = await get(`/projects?or=(${terms})`);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body)).toContain('DATA_API_MAX_FILTER_TERMS');
    const nested = await get(`/projects?or=(name.eq.a,and(name.eq.b,or(${terms})))`);
    expect(nested.status).toBe(400);
    const eight = Array.from({ length: 8 }, (_, i) => `name.eq.p0${i}`).join(',');
    const fine = await get(`/projects?select=name&or=(${eight})&order=name`);
    expect(fine.status).toBe(200);
    expect(fine.body).toHaveLength(8);
  });
});

describe('control characters', () => {
  test.each([
    ['an alias', '/projects?select=%22a%00b%22:name'],
    ['a column', '/projects?select=%22na%00me%22'],
    ['a filter column', '/projects?%22na%01me%22=eq.x'],
    ['an or term', '/projects?or=(%22na%00me%22.eq.x)'],
    ['an order term', '/projects?order=%22na%1Fme%22'],
    ['an embed', '/workspaces?select=%22proj%00ects%22(id)'],
  ])('in %s: 400, and the database stays available', async (_what, path) => {
    const res = await get(path);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'PGRST100' });
    expect((await get(`/projects?select=name&limit=1&workspace_id=eq.${ws}`)).status).toBe(200);
  });

  test('a NUL inside a filter value is a 400, not an outage', async () => {
    const res = await get('/projects?name=eq.a%00b');
    expect(res.status).toBe(400);
  });
});
