// The platform's hooks for a team's own table (migration 0062): its changes become activity
// entries (the feed and the digests read them), its rows per workspace count against the plan's
// limit for the resource it names, and an overdue workspace turns it read-only, as projects do.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { syncEntitlements } from '../../src/server/billing/entitlements.js';
import { appActivitySentence } from '../../src/app/lib/queries/activity.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { asUser, attempt, createUser, rpc, type TestUser } from '../support/tenancy.js';

let server: TestServer;
let owner: TestUser;
let outsider: TestUser;
let workspaceId: string;

beforeAll(async () => {
  server = await startTestServer();
  await server.pool.query(`
    create table public.tasks (
      id bigint generated always as identity primary key,
      workspace_id uuid not null references public.workspaces (id) on delete cascade,
      title text not null
    );
    create index tasks_workspace_idx on public.tasks (workspace_id);
    alter table public.tasks enable row level security;
    alter table public.tasks force row level security;
    create policy tasks_all on public.tasks for all to authenticated
      using (workspace_id = any ((select tenantry.workspace_ids('member'))::uuid[]))
      with check (workspace_id = any ((select tenantry.workspace_ids('member'))::uuid[]));
    grant select, insert (workspace_id, title), update (title), delete on public.tasks to authenticated;
    grant all on public.tasks to service_role;
    create trigger tasks_activity after insert or update or delete on public.tasks
      for each row execute function tenantry.record_activity('task', 'title');
    create trigger tasks_plan_limit before insert or update or delete on public.tasks
      for each row execute function tenantry.enforce_plan_limit('tasks');
  `);
  owner = await createUser(server.pool, 'hooks-owner');
  outsider = await createUser(server.pool, 'hooks-outsider');
  workspaceId = (await rpc<{ id: string }>(server.pool, owner, 'public.create_workspace($1)', ['Hooks Co']))
    .id;
});
afterAll(async () => server?.close());

const insertTask = (title: string) =>
  attempt(server.pool, owner, 'insert into public.tasks (workspace_id, title) values ($1, $2)', [
    workspaceId,
    title,
  ]);

test('changes of an app table are activity entries of the workspace, acted by the caller', async () => {
  await asUser(server.pool, owner, async (tx) => {
    await tx.query(`insert into public.tasks (workspace_id, title) values ($1, 'Write the guide')`, [
      workspaceId,
    ]);
    await tx.query(`update public.tasks set title = 'Write the guide well' where workspace_id = $1`, [
      workspaceId,
    ]);
    await tx.query('delete from public.tasks where workspace_id = $1', [workspaceId]);
  });
  const events = await asUser(
    server.pool,
    owner,
    async (tx) =>
      (
        await tx.query<{ action: string; subject: string; actor_id: string; data: Record<string, unknown> }>(
          `select action, subject, actor_id, data from public.activity_events
         where workspace_id = $1 and action like 'task.%' order by id`,
          [workspaceId],
        )
      ).rows,
  );
  expect(events.map((e) => [e.action, e.subject])).toEqual([
    ['task.created', 'Write the guide'],
    ['task.updated', 'Write the guide well'],
    ['task.deleted', 'Write the guide well'],
  ]);
  expect(events.every((e) => e.actor_id === owner.id && typeof e.data.task_id === 'number')).toBe(true);
  expect(appActivitySentence('task.created', 'Write the guide')).toBe('created the task Write the guide');
});

test('tenantry.log_activity writes for a workspace the caller may reach, and refuses others and bad actions', async () => {
  await rpc(server.pool, owner, `tenantry.log_activity($1, 'task.exported', 'All tasks', '{"rows": 3}')`, [
    workspaceId,
  ]);
  const refused = await attempt(server.pool, outsider, `select tenantry.log_activity($1, 'task.exported')`, [
    workspaceId,
  ]);
  expect(refused).toMatchObject({ ok: false, code: 'PT404' });
  const bad = await attempt(server.pool, owner, `select tenantry.log_activity($1, 'Exported!')`, [
    workspaceId,
  ]);
  expect(bad).toMatchObject({ ok: false, code: '22023' });
});

test("an insert past the plan's limit for the resource is refused with 402; no limit named is unlimited", async () => {
  await syncEntitlements(server.pool, {
    freeSeats: 10,
    freeProjects: 1000,
    freeLimits: { tasks: 2 },
    plans: [],
    graceDays: 7,
  });
  expect(await rpc(server.pool, owner, `tenantry.plan_limit($1, 'tasks')`, [workspaceId])).toBe(2);
  await asUser(server.pool, owner, (tx) =>
    tx.query(`insert into public.tasks (workspace_id, title) values ($1, 'One'), ($1, 'Two')`, [workspaceId]),
  );
  const third = await insertTask('Three');
  expect(third).toMatchObject({ ok: false, code: 'PT402' });
  expect((third as { message: string }).message).toContain('limit of 2 tasks');

  await syncEntitlements(server.pool, { freeSeats: 10, freeProjects: 1000, plans: [], graceDays: 7 });
  expect(await rpc(server.pool, owner, `tenantry.plan_limit($1, 'tasks')`, [workspaceId])).toBeNull();
  expect(await insertTask('Three')).toEqual({ ok: true, rows: 1 });
});

test('a workspace read-only for an overdue payment refuses changes to the table', async () => {
  await server.pool.query(
    `insert into public.subscriptions (workspace_id, plan, status, past_due_since)
     values ($1, 'free', 'past_due', now() - interval '30 days')
     on conflict (workspace_id) do update set status = 'past_due', past_due_since = now() - interval '30 days'`,
    [workspaceId],
  );
  expect(await insertTask('Late')).toMatchObject({ ok: false, code: 'PT402' });
  const update = await attempt(
    server.pool,
    owner,
    `update public.tasks set title = 'x' where workspace_id = $1`,
    [workspaceId],
  );
  expect(update).toMatchObject({ ok: false, code: 'PT402' });
});
