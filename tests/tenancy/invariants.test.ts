// Business invariants enforced by the database, whoever writes: workspace creation, the last
// owner, no self-escalation, the invitation lifecycle, the activity log, profiles and preferences.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { withService } from '../../src/server/db/transactions.js';
import { createTestDatabase } from '../support/server.js';
import { asUser, attempt, createUser, rpc, type TestUser } from '../support/tenancy.js';

let pool: Pool;
beforeAll(async () => {
  pool = createPool(await createTestDatabase(), { max: 8 });
});
afterAll(async () => pool?.end());

async function workspaceWith(owner: TestUser, members: [TestUser, string][] = [], name = 'Acme') {
  const ws = await rpc<{ id: string; slug: string }>(pool, owner, 'public.create_workspace($1)', [name]);
  await withService(pool, async (tx) => {
    for (const [user, role] of members) {
      await tx.query('insert into public.workspace_members values ($1, $2, $3)', [ws.id, user.id, role]);
    }
  });
  return ws;
}

async function expectError(promise: Promise<unknown>, code: string, message?: RegExp) {
  const error = (await promise.then(
    () => null,
    (e: unknown) => e,
  )) as { code?: string; message?: string } | null;
  expect(error, 'expected an error').not.toBeNull();
  expect(error!.code).toBe(code);
  if (message) expect(error!.message).toMatch(message);
}

const roleOf = async (ws: string, user: TestUser) =>
  (
    await pool.query<{ role: string }>(
      'select role from public.workspace_members where workspace_id = $1 and user_id = $2',
      [ws, user.id],
    )
  ).rows[0]?.role;

const activity = async (ws: string) =>
  (
    await pool.query<{ action: string; actor_id: string | null }>(
      'select action, actor_id from public.activity_events where workspace_id = $1 order by id',
      [ws],
    )
  ).rows;

describe('create_workspace', () => {
  test('the creator becomes owner, with a derived unique slug, a free subscription and an activity event', async () => {
    const owner = await createUser(pool, 'creator');
    const a = await workspaceWith(owner, [], 'Acme Rockets!');
    const b = await workspaceWith(owner, [], 'Acme Rockets!');
    expect(a.slug).toBe('acme-rockets');
    expect(b.slug).toMatch(/^acme-rockets-[0-9a-f]{6}$/);
    expect(await roleOf(a.id, owner)).toBe('owner');
    const sub = await pool.query('select plan, status from public.subscriptions where workspace_id = $1', [
      a.id,
    ]);
    expect(sub.rows[0]).toEqual({ plan: 'free', status: 'active' });
    expect(await activity(a.id)).toEqual([
      { action: 'workspace.created', actor_id: owner.id },
      { action: 'member.added', actor_id: owner.id },
    ]);
  });

  test('bad input, taken slugs and anonymous callers are refused', async () => {
    const owner = await createUser(pool);
    await expectError(rpc(pool, owner, 'public.create_workspace($1)', ['  ']), '22023');
    await expectError(rpc(pool, owner, 'public.create_workspace($1, $2)', ['X', 'Bad Slug']), '22023');
    await rpc(pool, owner, 'public.create_workspace($1, $2)', ['X', 'taken-slug']);
    await expectError(
      rpc(pool, owner, 'public.create_workspace($1, $2)', ['Y', 'taken-slug']),
      '23505',
      /taken/,
    );
    await expectError(rpc(pool, null, 'public.create_workspace($1)', ['Z']), '42501');
  });
});

describe('owners and roles', () => {
  test('the last owner cannot leave, be removed, or be demoted', async () => {
    const owner = await createUser(pool);
    const ws = await workspaceWith(owner);
    await expectError(rpc(pool, owner, 'public.leave_workspace($1)', [ws.id]), 'P0001', /at least one owner/);
    await expectError(
      rpc(pool, owner, 'public.update_member_role($1, $2, $3)', [ws.id, owner.id, 'admin']),
      'P0001',
    );
    await expectError(rpc(pool, owner, 'public.remove_member($1, $2)', [ws.id, owner.id]), 'P0001');
    // not even the service role can leave a workspace ownerless
    await expectError(
      pool.query('delete from public.workspace_members where workspace_id = $1', [ws.id]),
      'P0001',
    );
    expect(await roleOf(ws.id, owner)).toBe('owner');
  });

  test('ownership moves by promoting another owner; then the first may leave', async () => {
    const [owner, heir] = [await createUser(pool), await createUser(pool)];
    const ws = await workspaceWith(owner, [[heir, 'admin']]);
    await rpc(pool, owner, 'public.update_member_role($1, $2, $3)', [ws.id, heir.id, 'owner']);
    await rpc(pool, owner, 'public.leave_workspace($1)', [ws.id]);
    expect(await roleOf(ws.id, heir)).toBe('owner');
    expect(await roleOf(ws.id, owner)).toBeUndefined();
    const actions = (await activity(ws.id)).map((a) => a.action);
    expect(actions).toContain('member.role_changed');
    expect(actions).toContain('member.left');
  });

  test('two owners demoting each other at the same moment cannot both succeed', async () => {
    const [a, b] = [await createUser(pool), await createUser(pool)];
    const ws = await workspaceWith(a, [[b, 'owner']]);
    const results = await Promise.allSettled([
      rpc(pool, a, 'public.update_member_role($1, $2, $3)', [ws.id, b.id, 'admin']),
      rpc(pool, b, 'public.update_member_role($1, $2, $3)', [ws.id, a.id, 'admin']),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const owners = await pool.query(
      `select 1 from public.workspace_members where workspace_id = $1 and role = 'owner'`,
      [ws.id],
    );
    expect(owners.rowCount).toBe(1);
  });

  test('nobody grants a role above their own or touches a higher role', async () => {
    const [owner, admin, member, other] = await Promise.all([1, 2, 3, 4].map(() => createUser(pool)));
    const ws = await workspaceWith(owner!, [
      [admin!, 'admin'],
      [member!, 'member'],
      [other!, 'viewer'],
    ]);
    const setRole = (by: TestUser, target: TestUser, role: string) =>
      rpc(pool, by, 'public.update_member_role($1, $2, $3)', [ws.id, target.id, role]);
    await expectError(setRole(admin!, other!, 'owner'), '42501', /above your own/);
    await expectError(setRole(admin!, admin!, 'owner'), '42501');
    await expectError(setRole(member!, other!, 'member'), '42501', /Only admins and owners/);
    await expectError(setRole(member!, member!, 'admin'), '42501');
    await expectError(setRole(admin!, owner!, 'member'), '42501', /Only owners/);
    await expectError(rpc(pool, admin!, 'public.remove_member($1, $2)', [ws.id, owner!.id]), '42501');
    await expectError(rpc(pool, member!, 'public.remove_member($1, $2)', [ws.id, other!.id]), '42501');
    await expectError(setRole(admin!, other!, 'superuser'), '22023');
    // what is allowed
    await setRole(admin!, other!, 'admin');
    expect(await roleOf(ws.id, other!)).toBe('admin');
    await rpc(pool, admin!, 'public.remove_member($1, $2)', [ws.id, member!.id]);
    expect(await roleOf(ws.id, member!)).toBeUndefined();
    // the same rules hold for a direct UPDATE through the table, not just the functions
    const direct = await attempt(
      pool,
      admin!,
      `update public.workspace_members set role = 'owner' where user_id = $1`,
      [other!.id],
    );
    expect(direct).toMatchObject({ ok: false, code: '42501' });
  });

  test('operations on a workspace the caller is not in report it as not found', async () => {
    const [owner, stranger] = [await createUser(pool), await createUser(pool)];
    const ws = await workspaceWith(owner);
    await expectError(rpc(pool, stranger, 'public.delete_workspace($1)', [ws.id]), 'PT404');
    await expectError(
      rpc(pool, stranger, 'public.invite_member($1, $2, $3)', [ws.id, 'x@example.com', 'viewer']),
      'PT404',
    );
    await expectError(
      rpc(pool, stranger, 'public.update_member_role($1, $2, $3)', [ws.id, owner.id, 'viewer']),
      'PT404',
    );
  });

  test('only an owner deletes the workspace, and everything in it goes', async () => {
    const [owner, admin] = [await createUser(pool), await createUser(pool)];
    const ws = await workspaceWith(owner, [[admin, 'admin']]);
    await expectError(rpc(pool, admin, 'public.delete_workspace($1)', [ws.id]), '42501');
    await rpc(pool, owner, 'public.delete_workspace($1)', [ws.id]);
    for (const table of ['workspaces', 'workspace_members', 'activity_events', 'subscriptions']) {
      const column = table === 'workspaces' ? 'id' : 'workspace_id';
      expect(
        (await pool.query(`select 1 from public.${table} where ${column} = $1`, [ws.id])).rowCount,
        table,
      ).toBe(0);
    }
  });
});

describe('invitations', () => {
  async function setup() {
    const [owner, admin, invitee, stranger] = await Promise.all([1, 2, 3, 4].map(() => createUser(pool)));
    const ws = await workspaceWith(owner!, [[admin!, 'admin']]);
    return { owner: owner!, admin: admin!, invitee: invitee!, stranger: stranger!, ws };
  }
  const invite = (by: TestUser, ws: string, email: string, role = 'member') =>
    rpc<{ invitation_id: string; token: string; expires_at: string }>(
      pool,
      by,
      'public.invite_member($1, $2, $3)',
      [ws, email, role],
    );

  test('accepted once, by the addressed user, within seven days', async () => {
    const { admin, invitee, stranger, ws } = await setup();
    const inv = await invite(admin, ws.id, invitee.email.toUpperCase());
    expect(inv.token).toMatch(/^[0-9a-f]{64}$/);
    const days = (new Date(inv.expires_at).getTime() - Date.now()) / 86400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThan(7.01);
    await expectError(
      rpc(pool, stranger, 'public.accept_invitation($1)', [inv.token]),
      '42501',
      /different e-mail/,
    );
    const accepted = await rpc<{ workspace_id: string; role: string }>(
      pool,
      invitee,
      'public.accept_invitation($1)',
      [inv.token],
    );
    expect(accepted).toEqual({ workspace_id: ws.id, role: 'member' });
    expect(await roleOf(ws.id, invitee)).toBe('member');
    await expectError(
      rpc(pool, invitee, 'public.accept_invitation($1)', [inv.token]),
      'PT409',
      /already been used/,
    );
    const actions = (await activity(ws.id)).map((a) => a.action);
    expect(actions).toEqual(
      expect.arrayContaining(['invitation.created', 'invitation.accepted', 'member.added']),
    );
  });

  test('the token is stored only as a hash', async () => {
    const { admin, invitee, ws } = await setup();
    const inv = await invite(admin, ws.id, invitee.email);
    const stored = await pool.query<{ token_hash: Buffer }>(
      'select token_hash from internal.invitation_tokens where invitation_id = $1',
      [inv.invitation_id],
    );
    expect(stored.rows[0]!.token_hash.toString('hex')).not.toContain(inv.token);
    expect(stored.rows[0]!.token_hash).toHaveLength(32);
  });

  test('expired, revoked and unknown tokens fail clearly', async () => {
    const { admin, invitee, ws } = await setup();
    const inv = await invite(admin, ws.id, invitee.email);
    await pool.query(`update public.invitations set expires_at = now() - interval '1 minute' where id = $1`, [
      inv.invitation_id,
    ]);
    await expectError(rpc(pool, invitee, 'public.accept_invitation($1)', [inv.token]), 'PT410', /expired/);
    const again = await invite(admin, ws.id, invitee.email); // an expired invitation no longer blocks a new one
    await rpc(pool, admin, 'public.revoke_invitation($1)', [again.invitation_id]);
    await expectError(rpc(pool, invitee, 'public.accept_invitation($1)', [again.token]), 'PT410', /revoked/);
    await expectError(rpc(pool, invitee, 'public.accept_invitation($1)', ['0'.repeat(64)]), 'PT404');
    await expectError(rpc(pool, invitee, 'public.accept_invitation($1)', ["'; drop table x; --"]), 'PT404');
  });

  test('resend rotates the token: the old link stops working, the new one works', async () => {
    const { admin, invitee, ws } = await setup();
    const inv = await invite(admin, ws.id, invitee.email);
    const resent = await rpc<{ token: string }>(pool, admin, 'public.resend_invitation($1)', [
      inv.invitation_id,
    ]);
    expect(resent.token).not.toBe(inv.token);
    await expectError(rpc(pool, invitee, 'public.accept_invitation($1)', [inv.token]), 'PT404');
    await rpc(pool, invitee, 'public.accept_invitation($1)', [resent.token]);
    expect(await roleOf(ws.id, invitee)).toBe('member');
  });

  test('one pending invitation per e-mail; members cannot be invited; roles capped; admins only', async () => {
    const { owner, admin, invitee, ws } = await setup();
    await invite(admin, ws.id, invitee.email);
    await expectError(invite(admin, ws.id, invitee.email), '23505', /already pending/);
    await expectError(invite(admin, ws.id, owner.email), '23505', /already a member/);
    await expectError(invite(admin, ws.id, 'someone@example.com', 'owner'), '42501', /above your own/);
    await expectError(invite(admin, ws.id, 'not-an-email'), '22023');
    const member = await createUser(pool);
    await withService(pool, (tx) =>
      tx.query(`insert into public.workspace_members values ($1, $2, 'member')`, [ws.id, member.id]),
    );
    await expectError(invite(member, ws.id, 'other@example.com'), '42501');
    expect((await invite(owner, ws.id, 'boss@example.com', 'owner')).token).toBeTruthy();
  });

  test('decline closes the invitation', async () => {
    const { admin, invitee, ws } = await setup();
    const inv = await invite(admin, ws.id, invitee.email);
    await rpc(pool, invitee, 'public.decline_invitation($1)', [inv.token]);
    await expectError(rpc(pool, invitee, 'public.accept_invitation($1)', [inv.token]), 'PT410', /declined/);
    expect(await roleOf(ws.id, invitee)).toBeUndefined();
  });

  test('invitees see their own invitations; members do not see pending invitations', async () => {
    const { admin, invitee, ws } = await setup();
    await invite(admin, ws.id, invitee.email);
    const seen = await asUser(pool, invitee, (tx) =>
      tx.query('select workspace_id, role from public.invitations'),
    );
    expect(seen.rows).toEqual([{ workspace_id: ws.id, role: 'member' }]);
  });
});

describe('profiles, preferences and the activity log', () => {
  test('sign-up creates a profile and weekly digest preferences; the profile e-mail follows the account', async () => {
    const user = await createUser(pool, 'fresh');
    const rows = await asUser(pool, user, async (tx) => ({
      profile: (await tx.query('select email, display_name from public.profiles where id = $1', [user.id]))
        .rows[0],
      prefs: (
        await tx.query('select digest_frequency, muted_workspace_ids from public.notification_preferences')
      ).rows,
    }));
    expect(rows.profile).toEqual({ email: user.email, display_name: null });
    expect(rows.prefs).toEqual([{ digest_frequency: 'weekly', muted_workspace_ids: [] }]);
    await pool.query(`update auth.users set email = 'renamed-' || email where id = $1`, [user.id]);
    const profile = await pool.query('select email from public.profiles where id = $1', [user.id]);
    expect(profile.rows[0].email).toBe(`renamed-${user.email}`);
  });

  test('users edit their own profile and preferences, within the rules', async () => {
    const user = await createUser(pool);
    const ok = await attempt(
      pool,
      user,
      `update public.profiles set display_name = 'Ada', avatar_url = 'https://x.test/a.png' where id = auth.uid()`,
    );
    expect(ok).toEqual({ ok: true, rows: 1 });
    const email = await attempt(
      pool,
      user,
      `update public.profiles set email = 'mine@example.com' where id = auth.uid()`,
    );
    expect(email).toMatchObject({ ok: false, code: '42501' });
    const badUrl = await attempt(
      pool,
      user,
      `update public.profiles set avatar_url = 'javascript:alert(1)' where id = auth.uid()`,
    );
    expect(badUrl).toMatchObject({ ok: false, code: '23514' });
    const freq = await attempt(
      pool,
      user,
      `update public.notification_preferences set digest_frequency = 'hourly'`,
    );
    expect(freq).toMatchObject({ ok: false, code: '23514' });
    const off = await attempt(
      pool,
      user,
      `update public.notification_preferences set digest_frequency = 'off'`,
    );
    expect(off).toEqual({ ok: true, rows: 1 });
  });

  test('project changes are logged with their actor, in the same transaction', async () => {
    const owner = await createUser(pool);
    const ws = await workspaceWith(owner);
    await asUser(pool, owner, async (tx) => {
      const p = await tx.query<{ id: string }>(
        `insert into public.projects (workspace_id, name) values ($1, 'Apollo') returning id`,
        [ws.id],
      );
      await tx.query(`update public.projects set name = 'Apollo 11' where id = $1`, [p.rows[0]!.id]);
      await tx.query(`delete from public.projects where id = $1`, [p.rows[0]!.id]);
    });
    const events = await pool.query<{ action: string; subject: string; actor_id: string }>(
      `select action, subject, actor_id from public.activity_events where workspace_id = $1 and action like 'project.%' order by id`,
      [ws.id],
    );
    expect(events.rows).toEqual([
      { action: 'project.created', subject: 'Apollo', actor_id: owner.id },
      { action: 'project.updated', subject: 'Apollo 11', actor_id: owner.id },
      { action: 'project.deleted', subject: 'Apollo 11', actor_id: owner.id },
    ]);
    // a rolled-back change leaves no event
    await attempt(pool, owner, `insert into public.projects (workspace_id, name) values ($1, 'Ghost')`, [
      ws.id,
    ]);
    const ghost = await pool.query(`select 1 from public.activity_events where subject = 'Ghost'`);
    expect(ghost.rowCount).toBe(0);
  });

  test('the creator of a project is the caller; clients cannot name another', async () => {
    const owner = await createUser(pool);
    const ws = await workspaceWith(owner);
    const row = await asUser(pool, owner, (tx) =>
      tx.query<{ created_by: string }>(
        `insert into public.projects (workspace_id, name) values ($1, 'Mine') returning created_by`,
        [ws.id],
      ),
    );
    expect(row.rows[0]!.created_by).toBe(owner.id);
    const forged = await attempt(
      pool,
      owner,
      `insert into public.projects (workspace_id, name, created_by) values ($1, 'Forged', gen_random_uuid())`,
      [ws.id],
    );
    expect(forged).toMatchObject({ ok: false, code: '42501' });
  });
});

describe('structure', () => {
  test('every public table has row-level security enabled and forced', async () => {
    const r = await pool.query<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean }>(
      `select c.relname, c.relrowsecurity, c.relforcerowsecurity from pg_class c
       join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'public' and c.relkind in ('r', 'p')`,
    );
    expect(r.rows.length).toBeGreaterThanOrEqual(8);
    for (const row of r.rows)
      expect(row, row.relname).toMatchObject({ relrowsecurity: true, relforcerowsecurity: true });
  });

  test('every SECURITY DEFINER function pins its search_path and is not owned by a superuser', async () => {
    const r = await pool.query<{ name: string; config: string[] | null; owner: string }>(
      `select p.oid::regprocedure::text as name, p.proconfig as config, pg_get_userbyid(p.proowner) as owner
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where p.prosecdef and n.nspname in ('public', 'internal', 'auth', 'storage', 'realtime', 'tenantry')`,
    );
    expect(r.rows.length).toBeGreaterThan(10);
    for (const fn of r.rows) {
      expect(fn.config ?? [], fn.name).toContainEqual(expect.stringMatching(/^search_path=/));
      expect(fn.owner, fn.name).toBe('service_role');
    }
  });

  test('anonymous callers can run none of the operations', async () => {
    const r = await pool.query<{ name: string }>(
      `select p.proname as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'public' and has_function_privilege('anon', p.oid, 'execute')`,
    );
    expect(r.rows).toEqual([]);
  });
});
