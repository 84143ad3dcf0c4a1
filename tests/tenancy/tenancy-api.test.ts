// The tenancy API (schema tenantry, migration 0060) as an application table uses it: a
// workspace-scoped table whose policies call tenantry.workspace_ids() is isolated per workspace,
// honours roles, the workspace's MFA requirement, membership changes, bans and deletions at once,
// and is planned through its workspace index; is_member, has_role and role answer the same for
// one workspace. Core tables use the same functions.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { withService, type Claims } from '../../src/server/db/transactions.js';
import type { Pool } from '../../src/server/db/pool.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { asUser, attempt, createUser, rpc, type TestUser } from '../support/tenancy.js';

let server: TestServer;
let pool: Pool;
let owner: TestUser;
let member: TestUser;
let viewer: TestUser;
let outsider: TestUser;
let workspaceId: string;
let otherWorkspace: string;

const APP_TABLE = `
create table public.tasks (
  id bigint generated always as identity primary key,
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  title text not null
);
create index tasks_workspace_idx on public.tasks (workspace_id);
alter table public.tasks enable row level security;
alter table public.tasks force row level security;
create policy tasks_read on public.tasks for select to authenticated
  using (workspace_id = any ((select tenantry.workspace_ids())::uuid[]));
create policy tasks_write on public.tasks for insert to authenticated
  with check (workspace_id = any ((select tenantry.workspace_ids('member'))::uuid[]));
grant select, insert on public.tasks to authenticated;
`;

beforeAll(async () => {
  server = await startTestServer();
  pool = server.pool;
  await pool.query(APP_TABLE);
  const users = await Promise.all(
    ['api-owner', 'api-member', 'api-viewer', 'api-outsider'].map((l) => createUser(pool, l)),
  );
  [owner, member, viewer, outsider] = users as [TestUser, TestUser, TestUser, TestUser];
  workspaceId = (await rpc<{ id: string }>(pool, owner, 'public.create_workspace($1)', ['Api Co'])).id;
  otherWorkspace = (await rpc<{ id: string }>(pool, outsider, 'public.create_workspace($1)', ['Other Co']))
    .id;
  await withService(pool, async (tx) => {
    await tx.query(`insert into public.workspace_members values ($1, $2, 'member'), ($1, $3, 'viewer')`, [
      workspaceId,
      member.id,
      viewer.id,
    ]);
    await tx.query(`insert into public.tasks (workspace_id, title) values ($1, 'Ours'), ($2, 'Theirs')`, [
      workspaceId,
      otherWorkspace,
    ]);
  });
});
afterAll(async () => server?.close());

const titles = (user: TestUser) =>
  asUser(pool, user, async (tx) =>
    (await tx.query<{ title: string }>('select title from public.tasks order by title')).rows.map(
      (r) => r.title,
    ),
  );

/** Runs a query with claims set directly (as a team's own server might), past the service's opening check. */
async function withClaims<T>(claims: Claims, sql: string): Promise<T> {
  return withService(pool, async (tx) => {
    await tx.query(
      `select set_config('request.jwt.claims', $1, true), set_config('role', 'authenticated', true)`,
      [JSON.stringify(claims)],
    );
    return (await tx.query<{ v: T }>(`select (${sql}) as v`)).rows[0]!.v;
  });
}

describe('an application table with policies written on tenantry.workspace_ids()', () => {
  test('each caller sees only their workspaces; writing takes the member role', async () => {
    expect(await titles(member)).toEqual(['Ours']);
    expect(await titles(viewer)).toEqual(['Ours']);
    expect(await titles(outsider)).toEqual(['Theirs']);
    const insert = `insert into public.tasks (workspace_id, title) values ($1, 'New')`;
    expect(await attempt(pool, member, insert, [workspaceId])).toEqual({ ok: true, rows: 1 });
    expect(await attempt(pool, viewer, insert, [workspaceId])).toMatchObject({ ok: false, code: '42501' });
    expect(await attempt(pool, outsider, insert, [workspaceId])).toMatchObject({ ok: false, code: '42501' });
  });

  test('a workspace that requires MFA is closed to sessions at aal1 and open at aal2', async () => {
    await pool.query('update public.workspaces set require_mfa = true where id = $1', [workspaceId]);
    try {
      expect(await titles(member)).toEqual([]);
      const aal2: Claims = { role: 'authenticated', sub: member.id, aal: 'aal2' };
      expect(await withClaims<number>(aal2, 'select count(*)::int from public.tasks')).toBe(1);
      expect(
        await withClaims<boolean>({ ...aal2, aal: 'aal1' }, `select tenantry.is_member('${workspaceId}')`),
      ).toBe(false);
      expect(await withClaims<boolean>(aal2, `select tenantry.is_member('${workspaceId}')`)).toBe(true);
    } finally {
      await pool.query('update public.workspaces set require_mfa = false where id = $1', [workspaceId]);
    }
  });

  test('a membership removed is honoured at once', async () => {
    const leaver = await createUser(pool, 'api-leaver');
    await pool.query(`insert into public.workspace_members values ($1, $2, 'viewer')`, [
      workspaceId,
      leaver.id,
    ]);
    expect(await titles(leaver)).toContain('Ours');
    await pool.query('delete from public.workspace_members where user_id = $1', [leaver.id]);
    expect(await titles(leaver)).toEqual([]);
  });

  test('a banned or deleted account reaches nothing, even with its claims set directly', async () => {
    const claims: Claims = { role: 'authenticated', sub: member.id };
    expect(await withClaims<number>(claims, 'select cardinality(tenantry.workspace_ids())')).toBe(1);
    await pool.query(`update auth.users set banned_until = now() + interval '1 hour' where id = $1`, [
      member.id,
    ]);
    try {
      expect(await withClaims<number>(claims, 'select count(*)::int from public.tasks')).toBe(0);
      expect(await withClaims<boolean>(claims, `select tenantry.has_role('${workspaceId}', 'member')`)).toBe(
        false,
      );
    } finally {
      await pool.query('update auth.users set banned_until = null where id = $1', [member.id]);
    }
    await pool.query('update auth.users set deleted_at = now() where id = $1', [viewer.id]);
    try {
      expect(
        await withClaims<number>(
          { role: 'authenticated', sub: viewer.id },
          'select count(*)::int from public.tasks',
        ),
      ).toBe(0);
    } finally {
      await pool.query('update auth.users set deleted_at = null where id = $1', [viewer.id]);
    }
  });

  test('the reads are planned through the workspace index, the helper evaluated once', async () => {
    const plan = await asUser(pool, member, async (tx) => {
      await tx.query('set local enable_seqscan = off');
      const r = await tx.query<{ 'QUERY PLAN': string }>(
        `explain select title from public.tasks where workspace_id = $1`,
        [workspaceId],
      );
      return r.rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).toMatch(/InitPlan/);
    expect(plan).toMatch(/tasks_workspace_idx/);
    expect(plan.match(/workspace_ids/g)?.length ?? 0).toBeLessThanOrEqual(1);
  });
});

describe('one workspace at a time', () => {
  test('role, is_member and has_role', async () => {
    const ask = (user: TestUser, sql: string) => rpc(pool, user, sql, [workspaceId]);
    expect(await ask(owner, 'tenantry.role($1)')).toBe('owner');
    expect(await ask(member, 'tenantry.role($1)')).toBe('member');
    expect(await ask(outsider, 'tenantry.role($1)')).toBeNull();
    expect(await ask(viewer, 'tenantry.is_member($1)')).toBe(true);
    expect(await ask(outsider, 'tenantry.is_member($1)')).toBe(false);
    expect(await ask(member, `tenantry.has_role($1, 'member')`)).toBe(true);
    expect(await ask(member, `tenantry.has_role($1, 'admin')`)).toBe(false);
    expect(await ask(owner, `tenantry.has_role($1, 'admin')`)).toBe(true);
    expect(await rpc(pool, null, 'tenantry.workspace_ids()')).toEqual([]);
  });

  test('core policies call the same functions, and the old helpers are gone', async () => {
    const policies = await pool.query<{ name: string; qual: string | null; check: string | null }>(
      `select policyname as name, qual, with_check as check from pg_policies
       where schemaname = 'public' and permissive = 'PERMISSIVE' and (qual like '%workspace%' or with_check like '%workspace%')`,
    );
    expect(policies.rows.length).toBeGreaterThan(8);
    for (const p of policies.rows)
      expect(`${p.qual} ${p.check}`, p.name).not.toMatch(/internal\.my_\w*workspace/);
    const old = await pool.query(
      `select 1 from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'internal' and p.proname in ('my_workspace_id_array', 'my_open_workspace_id_array')`,
    );
    expect(old.rowCount).toBe(0);
  });
});
