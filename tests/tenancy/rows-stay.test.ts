// Rows never move between workspaces (or between users): a PATCH of workspace_id on any exposed
// workspace-scoped table is refused for everyone, the service role included, and changes
// nothing, so plan limits and the read-only state of an overdue workspace cannot be walked
// around by moving rows. Also: reopening an expired invitation takes a seat like a new one.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { syncEntitlements } from '../../src/server/billing/entitlements.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';

let server: TestServer;
let owner: SignedIn;
let helper: SignedIn;
let from: string;
let to: string;

beforeAll(async () => {
  server = await startTestServer();
  [owner, helper] = await Promise.all([signUp(server, 'owner'), signUp(server, 'helper')]);
  // the owner owns both workspaces; each has a member, a project, an invitation, activity, a subscription
  from = await workspace(server, owner, 'From', [[helper, 'member']]);
  to = await workspace(server, owner, 'To');
  for (const ws of [from, to]) {
    expect((await owner.client.from('projects').insert({ workspace_id: ws, name: 'Seed' })).error).toBeNull();
    const invited = await owner.client.rpc('invite_member', {
      workspace_id: ws,
      email: `invitee-${ws.slice(0, 8)}@example.com`,
      role: 'member',
    });
    expect(invited.error).toBeNull();
  }
});
afterAll(async () => server?.close());

/** Every row of a table in a workspace, as JSON text, to compare before and after. */
async function snapshot(table: string, ws: string): Promise<string[]> {
  const r = await server.pool.query<{ row: string }>(
    `select to_jsonb(t)::text as row from public.${table} t where t.workspace_id = $1 order by 1`,
    [ws],
  );
  return r.rows.map((x) => x.row);
}

// (the audit log's lines are changed by no role: nobody holds UPDATE on it)
const FIXED = /workspace_id cannot be changed|permission denied for table audit_events/;

describe('PATCH workspace_id on every exposed workspace-scoped table', () => {
  const tables = async () =>
    (
      await server.pool.query<{ table_name: string }>(
        `select c.table_name from information_schema.columns c
         join information_schema.tables t using (table_schema, table_name)
         where c.table_schema = 'public' and c.column_name = 'workspace_id' and t.table_type = 'BASE TABLE'
         order by 1`,
      )
    ).rows.map((r) => r.table_name);

  test('the list of tables is what this suite expects (a new table is covered automatically)', async () => {
    expect(await tables()).toEqual([
      'activity_events',
      'audit_events',
      'invitations',
      'projects',
      'subscriptions',
      'workspace_members',
    ]);
  });

  test('refused for the owner of both workspaces, with nothing changed', async () => {
    for (const table of await tables()) {
      const before = [await snapshot(table, from), await snapshot(table, to)];
      expect(before[0], table).not.toHaveLength(0);
      const moved = await owner.client
        .from(table)
        .update({ workspace_id: to })
        .eq('workspace_id', from)
        .select();
      expect(moved.error, table).not.toBeNull();
      expect([400, 403], `${table}: ${moved.status} ${moved.error?.message}`).toContain(moved.status);
      expect([await snapshot(table, from), await snapshot(table, to)], table).toEqual(before);
    }
  });

  test('refused for the service role too, with a message naming the rule', async () => {
    const admin = server.adminClient();
    for (const table of await tables()) {
      const before = [await snapshot(table, from), await snapshot(table, to)];
      const moved = await admin.from(table).update({ workspace_id: to }).eq('workspace_id', from);
      expect(moved.status, table).toBe(403);
      expect(moved.error?.message, table).toMatch(FIXED);
      expect([await snapshot(table, from), await snapshot(table, to)], table).toEqual(before);
    }
  });

  test('a project PATCH that repeats its own workspace_id (the whole row sent back) still works', async () => {
    const { data } = await owner.client.from('projects').select('id').eq('workspace_id', from).single();
    const same = await owner.client
      .from('projects')
      .update({ workspace_id: from, name: 'Renamed in place' })
      .eq('id', (data as { id: string }).id)
      .select('name');
    expect(same.error).toBeNull();
    expect(same.data).toEqual([{ name: 'Renamed in place' }]);
  });
});

describe('rows that belong to a user stay with that user', () => {
  const cases: [table: string, column: string][] = [
    ['workspace_members', 'user_id'],
    ['notification_preferences', 'user_id'],
    ['profiles', 'id'],
  ];
  test.each(cases)('%s.%s cannot be changed, not even by the service role', async (table, column) => {
    const admin = server.adminClient();
    const other = await signUp(server, 'other');
    const moved = await admin
      .from(table)
      .update({ [column]: other.id })
      .eq(column, helper.id);
    expect(moved.status).toBe(403);
    expect(moved.error?.message).toMatch(new RegExp(`${column} cannot be changed`));
    const still = await server.pool.query(`select 1 from public.${table} where ${column} = $1`, [helper.id]);
    expect(still.rowCount).toBeGreaterThan(0);
  });

  test('an invitation stays addressed to the e-mail its link was sent to', async () => {
    const admin = server.adminClient();
    const moved = await admin
      .from('invitations')
      .update({ email: 'someone-else@example.com' })
      .eq('workspace_id', from);
    expect(moved.status).toBe(403);
    expect(moved.error?.message).toMatch(/email cannot be changed/);
  });
});

describe('limits cannot be walked around by moving rows', () => {
  let full: string;
  let spare: string;
  let overdue: string;

  beforeAll(async () => {
    await syncEntitlements(server.pool, { freeSeats: 3, freeProjects: 3, graceDays: 7, plans: [] });
    full = await workspace(server, owner, 'Full');
    spare = await workspace(server, owner, 'Spare');
    overdue = await workspace(server, owner, 'Overdue');
    for (const [ws, n] of [
      [full, 3],
      [spare, 3],
      [overdue, 2],
    ] as const) {
      for (let i = 1; i <= n; i++) {
        expect(
          (await owner.client.from('projects').insert({ workspace_id: ws, name: `P${i}` })).error,
        ).toBeNull();
      }
    }
  });

  const count = async (ws: string) =>
    (
      await server.pool.query<{ n: number }>(
        'select count(*)::int as n from public.projects where workspace_id = $1',
        [ws],
      )
    ).rows[0]!.n;

  test('moving projects into a workspace at its project limit is refused', async () => {
    const moved = await owner.client
      .from('projects')
      .update({ workspace_id: full })
      .eq('workspace_id', spare);
    expect(moved.status).toBe(403);
    expect(moved.error?.message).toMatch(FIXED);
    expect([await count(full), await count(spare)]).toEqual([3, 3]);
  });

  test('a read-only (overdue) workspace keeps its projects: no move, no rename, no upsert', async () => {
    await server.pool.query(
      `update public.subscriptions set status = 'past_due', past_due_since = now() - interval '8 days'
       where workspace_id = $1`,
      [overdue],
    );
    const escape = await owner.client
      .from('projects')
      .update({ workspace_id: to, name: 'Escaped' })
      .eq('workspace_id', overdue);
    expect([402, 403]).toContain(escape.status);
    const rename = await owner.client
      .from('projects')
      .update({ name: 'Renamed' })
      .eq('workspace_id', overdue);
    expect(rename.status).toBe(402);
    const { data } = await owner.client
      .from('projects')
      .select('id')
      .eq('workspace_id', overdue)
      .limit(1)
      .single();
    const upsert = await owner.client
      .from('projects')
      .upsert({ id: (data as { id: string }).id, workspace_id: overdue, name: 'Upserted' });
    expect(upsert.status).toBe(402);
    const names = await server.pool.query<{ name: string }>(
      'select name from public.projects where workspace_id = $1 order by name',
      [overdue],
    );
    expect(names.rows.map((r) => r.name)).toEqual(['P1', 'P2']);
  });

  test('resending an expired invitation takes a seat like a new invitation', async () => {
    // 3 seats: the owner and two invitations
    const ws = await workspace(server, owner, 'Seats');
    const first = await owner.client.rpc('invite_member', { workspace_id: ws, email: 'seat-a@example.com' });
    expect(first.error).toBeNull();
    expect(
      (await owner.client.rpc('invite_member', { workspace_id: ws, email: 'seat-b@example.com' })).error,
    ).toBeNull();
    const id = (first.data as { invitation_id: string }).invitation_id;
    await server.pool.query(
      `update public.invitations set expires_at = now() - interval '1 minute' where id = $1`,
      [id],
    );
    // the expired one no longer holds a seat, so a third invitation fits
    expect(
      (await owner.client.rpc('invite_member', { workspace_id: ws, email: 'seat-c@example.com' })).error,
    ).toBeNull();
    const reopened = await owner.client.rpc('resend_invitation', { invitation_id: id });
    expect(reopened.status).toBe(402);
    expect(reopened.error?.message).toMatch(/all 3 seats/);
    const open = await server.pool.query<{ n: number }>(
      `select count(*)::int as n from public.invitations where workspace_id = $1 and expires_at > now()`,
      [ws],
    );
    expect(open.rows[0]!.n).toBe(2);
  });
});
