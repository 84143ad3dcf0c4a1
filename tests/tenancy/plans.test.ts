// How policies are planned for a caller in many workspaces on an installation where one workspace
// holds most rows: the caller's workspace list must drive the workspace index, never a scan of
// the whole table that tests every row against that list (migration 0044, decision 0038).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { withService } from '../../src/server/db/transactions.js';
import { createTestDatabase } from '../support/server.js';
import { asUser, createUser, type TestUser } from '../support/tenancy.js';

const OWN_WORKSPACES = 300;
const PROJECTS = 4000;
// The busy workspace's id sorts last among the caller's, where a scan's test of the array costs
// the most per row.
const BUSY = 'ffffffff-ffff-4fff-bfff-ffffffffffff';

let pool: Pool;
let caller: TestUser;

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

/** The plan's nodes, as the caller would run the statement. */
async function planOf(sql: string): Promise<PlanNode[]> {
  return asUser(pool, caller, async (tx) => {
    const r = await tx.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`explain (format json) ${sql}`);
    return nodes(r.rows[0]!['QUERY PLAN'][0].Plan);
  });
}

beforeAll(async () => {
  pool = createPool(await createTestDatabase(), { max: 4 });
  caller = await createUser(pool, 'many');
  await withService(pool, async (tx) => {
    await tx.query(`insert into public.workspaces (id, name, slug) values ($1, 'Busy', 'busy-plans')`, [
      BUSY,
    ]);
    await tx.query(`insert into public.workspace_members values ($1, $2, 'member')`, [BUSY, caller.id]);
    await tx.query(
      `with made as (
         insert into public.workspaces (name, slug)
         select 'Own ' || g, 'own-plans-' || g from generate_series(1, $1::int) g returning id
       )
       insert into public.workspace_members select id, $2, 'owner' from made`,
      [OWN_WORKSPACES, caller.id],
    );
    await tx.query(
      `insert into public.projects (workspace_id, name)
       select $1, 'Project ' || g from generate_series(1, $2::int) g`,
      [BUSY, PROJECTS],
    );
    // The activity log as skewed as the projects: only the busy workspace's events remain.
    await tx.query('delete from public.activity_events where workspace_id <> $1', [BUSY]);
  });
  await pool.query('analyze public.projects, public.activity_events, public.workspace_members');
}, 120_000);
afterAll(async () => pool?.end());

describe('a caller in many workspaces, one of which holds most rows', () => {
  test('sees every row of the busy workspace', async () => {
    const count = await asUser(pool, caller, async (tx) => {
      const r = await tx.query<{ n: string }>('select count(*) as n from public.projects');
      return Number(r.rows[0]!.n);
    });
    expect(count).toBe(PROJECTS);
  });

  test.each([
    [
      'projects',
      'projects_workspace_idx',
      'select id, name, created_at from public.projects order by created_at desc limit 20',
    ],
    [
      'activity_events',
      'activity_events_workspace_idx',
      'select id, action from public.activity_events order by created_at desc limit 20',
    ],
  ])('%s: the newest rows are found through %s', async (table, index, sql) => {
    const plan = await planOf(sql);
    const scans = plan.filter((n) => n['Relation Name'] === table);
    expect(scans.length).toBeGreaterThan(0);
    for (const scan of scans)
      expect(scan['Node Type']).toMatch(/^(Index Scan|Index Only Scan|Bitmap Heap Scan)$/);
    expect(plan.some((n) => n['Index Name'] === index)).toBe(true);
  });

  test('every tenant key an index on workspace_id serves plans for a slice', async () => {
    const r = await pool.query<{ table: string; options: string[] | null }>(
      `select c.relname as table, a.attoptions as options
       from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'public' and a.attname = 'workspace_id' and c.relkind = 'r'
         and c.relname not in ('subscriptions', 'invitations')
       order by 1`,
    );
    // subscriptions has one row per workspace; invitations have no index the array could drive.
    // A new table of workspace rows belongs in this list, with the setting (docs/data-model.md).
    expect(r.rows.map((row) => row.table)).toEqual([
      'activity_events',
      'audit_events',
      'projects',
      'workspace_members',
    ]);
    for (const row of r.rows) expect(row.options ?? [], row.table).toContain('n_distinct=1000');
  });
});
