// The guards of 0021_tenancy_guards.sql and the properties that keep RLS cheap and closed:
// clear errors for direct workspace edits, race-free workspace creation, invitations bound to a
// confirmed e-mail, account deletion that never leaves a workspace ownerless, private
// preferences, and membership helpers that are read-only and evaluated once per statement.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { withService } from '../../src/server/db/transactions.js';
import { createTestDatabase } from '../support/server.js';
import { asUser, attempt, claimsFor, createUser, rpc, type TestUser } from '../support/tenancy.js';

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

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (e: { code?: string; message?: string }) => ({ code: e.code, message: e.message }),
  );

describe('direct workspace edits (PATCH /rest/v1/workspaces) get clear errors', () => {
  beforeAll(async () => {
    const stranger = await createUser(pool);
    await rpc(pool, stranger, 'public.create_workspace($1, $2)', ['Elsewhere', 'taken-elsewhere']);
  });

  const cases: [label: string, change: { name?: string; slug?: string }, code: string, message: RegExp][] = [
    ['an empty name', { name: '   ' }, '22023', /name must be 1 to 100/],
    ['a long name', { name: 'x'.repeat(101) }, '22023', /name must be 1 to 100/],
    ['an invalid slug', { slug: 'Bad Slug' }, '22023', /Slug must be/],
    ['a slug ending in a dash', { slug: 'acme-' }, '22023', /Slug must be/],
    ['a taken slug', { slug: 'taken-elsewhere' }, '23505', /The slug "taken-elsewhere" is taken/],
  ];
  test.each(cases)('%s', async (_label, change, code, message) => {
    const owner = await createUser(pool);
    const ws = await workspaceWith(owner);
    const outcome = await attempt(
      pool,
      owner,
      'update public.workspaces set name = coalesce($2, name), slug = coalesce($3, slug) where id = $1',
      [ws.id, change.name ?? null, change.slug ?? null],
    );
    expect(outcome).toMatchObject({ ok: false, code });
    expect(outcome.ok ? '' : outcome.message).toMatch(message);
  });

  test('a valid rename trims the name and keeps the slug unique', async () => {
    const owner = await createUser(pool);
    const ws = await workspaceWith(owner);
    await asUser(pool, owner, (tx) =>
      tx.query(`update public.workspaces set name = '  Renamed  ', slug = $2 where id = $1`, [
        ws.id,
        `renamed-${ws.slug}`,
      ]),
    );
    const row = await pool.query('select name, slug from public.workspaces where id = $1', [ws.id]);
    expect(row.rows[0]).toEqual({ name: 'Renamed', slug: `renamed-${ws.slug}` });
  });
});

describe('create_workspace', () => {
  test('same-named workspaces created at the same moment all succeed, with distinct slugs', async () => {
    const users = await Promise.all([1, 2, 3, 4, 5, 6].map(() => createUser(pool)));
    const made = await Promise.all(
      users.map((u) => rpc<{ slug: string }>(pool, u, 'public.create_workspace($1)', ['Stampede'])),
    );
    const slugs = made.map((w) => w.slug);
    expect(new Set(slugs).size).toBe(users.length);
    expect(slugs).toContain('stampede');
    for (const slug of slugs) expect(slug).toMatch(/^stampede(-[0-9a-f]{6})?$/);
  });

  test('an explicit slug that is taken is reported, not replaced', async () => {
    const [a, b] = [await createUser(pool), await createUser(pool)];
    await rpc(pool, a, 'public.create_workspace($1, $2)', ['First', 'mine']);
    expect(await failure(rpc(pool, b, 'public.create_workspace($1, $2)', ['Second', 'mine']))).toEqual({
      code: '23505',
      message: 'The slug "mine" is taken',
    });
  });

  test('a name without letters or digits gets a generic slug', async () => {
    const owner = await createUser(pool);
    const ws = await rpc<{ slug: string; name: string }>(pool, owner, 'public.create_workspace($1)', [
      '✨✨',
    ]);
    expect(ws).toMatchObject({ name: '✨✨' });
    expect(ws.slug).toMatch(/^workspace(-[0-9a-f]{6})?$/);
  });
});

describe('invitations need a confirmed e-mail', () => {
  test('an unconfirmed account neither sees nor answers the invitation until it confirms', async () => {
    const owner = await createUser(pool);
    const ws = await workspaceWith(owner);
    const email = `unconfirmed-${Date.now()}@example.com`;
    const invitee = await withService(pool, async (tx) => {
      const r = await tx.query<{ id: string }>('insert into auth.users (email) values ($1) returning id', [
        email,
      ]);
      return { id: r.rows[0]!.id, email };
    });
    const inv = await rpc<{ token: string }>(pool, owner, 'public.invite_member($1, $2, $3)', [
      ws.id,
      email,
      'member',
    ]);
    const visible = await asUser(pool, invitee, (tx) => tx.query('select id from public.invitations'));
    expect(visible.rowCount).toBe(0);
    for (const fn of ['accept_invitation', 'decline_invitation']) {
      expect(await failure(rpc(pool, invitee, `public.${fn}($1)`, [inv.token]))).toEqual({
        code: '42501',
        message: 'Confirm your e-mail address before answering this invitation',
      });
    }
    await pool.query('update auth.users set email_confirmed_at = now() where id = $1', [invitee.id]);
    await rpc(pool, invitee, 'public.accept_invitation($1)', [inv.token]);
    const role = await pool.query(
      'select role from public.workspace_members where workspace_id = $1 and user_id = $2',
      [ws.id, invitee.id],
    );
    expect(role.rows).toEqual([{ role: 'member' }]);
  });
});

describe('deleting an account never leaves a workspace without an owner', () => {
  const deleteAccount = (user: TestUser) => pool.query('delete from auth.users where id = $1', [user.id]);
  const exists = async (ws: string) =>
    (await pool.query('select 1 from public.workspaces where id = $1', [ws])).rowCount === 1;

  test('the last owner of a workspace with other members cannot be deleted', async () => {
    const [owner, member] = [await createUser(pool), await createUser(pool)];
    const ws = await workspaceWith(owner, [[member, 'admin']], 'Shared');
    expect(await failure(deleteAccount(owner))).toEqual({
      code: 'P0001',
      message:
        'This account is the last owner of the workspace "Shared": make someone else owner or delete the workspace first',
    });
    expect(await exists(ws.id)).toBe(true);
    // once ownership has moved, the account goes and the workspace stays with its new owner
    await rpc(pool, owner, 'public.update_member_role($1, $2, $3)', [ws.id, member.id, 'owner']);
    await deleteAccount(owner);
    const members = await pool.query(
      'select user_id, role from public.workspace_members where workspace_id = $1',
      [ws.id],
    );
    expect(members.rows).toEqual([{ user_id: member.id, role: 'owner' }]);
  });

  test('a workspace with no other member goes with the account; a co-owned one stays', async () => {
    const [owner, coOwner] = [await createUser(pool), await createUser(pool)];
    const solo = await workspaceWith(owner, [], 'Solo');
    const shared = await workspaceWith(owner, [[coOwner, 'owner']], 'Co-owned');
    await deleteAccount(owner);
    expect(await exists(solo.id)).toBe(false);
    expect(await exists(shared.id)).toBe(true);
    const events = await pool.query<{ action: string }>(
      'select action from public.activity_events where workspace_id = $1 order by id desc limit 1',
      [shared.id],
    );
    expect(events.rows).toEqual([{ action: 'member.removed' }]);
  });
});

describe('notification preferences are private', () => {
  test('a coworker (even an owner) can neither read nor change another user’s preferences', async () => {
    const [owner, member] = [await createUser(pool), await createUser(pool)];
    await workspaceWith(owner, [[member, 'member']]);
    const read = await asUser(pool, owner, (tx) =>
      tx.query('select user_id from public.notification_preferences where user_id = $1', [member.id]),
    );
    expect(read.rowCount).toBe(0);
    const write = await attempt(
      pool,
      owner,
      `update public.notification_preferences set digest_frequency = 'off' where user_id = $1`,
      [member.id],
    );
    expect(write).toEqual({ ok: true, rows: 0 });
    const own = await asUser(pool, member, (tx) =>
      tx.query('select user_id, digest_frequency from public.notification_preferences'),
    );
    expect(own.rows).toEqual([{ user_id: member.id, digest_frequency: 'weekly' }]);
  });

  test('a user mutes a workspace for themselves only', async () => {
    const [owner, member] = [await createUser(pool), await createUser(pool)];
    const ws = await workspaceWith(owner, [[member, 'viewer']]);
    const muted = await attempt(
      pool,
      member,
      `update public.notification_preferences set muted_workspace_ids = array[$1::uuid] where user_id = auth.uid()`,
      [ws.id],
    );
    expect(muted).toEqual({ ok: true, rows: 1 });
    const forOwner = await attempt(
      pool,
      member,
      `update public.notification_preferences set muted_workspace_ids = array[$1::uuid] where user_id = $2`,
      [ws.id, owner.id],
    );
    expect(forOwner).toEqual({ ok: true, rows: 0 });
  });
});

describe('membership helpers', () => {
  test('the helpers clients may execute are read-only (stable, immutable) or trigger functions', async () => {
    const r = await pool.query<{ name: string; volatility: string; trigger: boolean }>(
      `select p.oid::regprocedure::text as name, p.provolatile as volatility,
              p.prorettype = 'trigger'::regtype as trigger
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'internal'
         and (has_function_privilege('authenticated', p.oid, 'execute')
              or has_function_privilege('anon', p.oid, 'execute'))`,
    );
    expect(r.rows.length).toBeGreaterThan(0);
    for (const fn of r.rows) expect(fn.trigger || fn.volatility !== 'v', fn.name).toBe(true);
    const anon = await pool.query(`select has_schema_privilege('anon', 'internal', 'usage') as usage`);
    expect(anon.rows[0]).toEqual({ usage: false });
  });

  test('are evaluated once per statement, however many rows the policy filters', async () => {
    const owner = await createUser(pool);
    const ws = await workspaceWith(owner);
    await withService(pool, (tx) =>
      tx.query(
        `insert into public.projects (workspace_id, name) select $1, 'p' || g from generate_series(1, 300) g`,
        [ws.id],
      ),
    );
    // Count calls of every internal function within one transaction, as the user, via the
    // per-transaction function statistics (track_functions must be on before the role switch).
    const client = await pool.connect();
    try {
      await client.query('begin');
      await client.query(`set local track_functions = 'all'`);
      await client.query(
        `select set_config('request.jwt.claims', $1, true), set_config('role', 'authenticated', true)`,
        [JSON.stringify(claimsFor(owner))],
      );
      const rows = await client.query('select id from public.projects');
      expect(rows.rowCount).toBe(300);
      const calls = await client.query<{ calls: number }>(
        `select coalesce(sum(pg_stat_get_xact_function_calls(p.oid)), 0)::int as calls
         from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'internal'`,
      );
      expect(calls.rows[0]!.calls).toBeGreaterThan(0);
      expect(calls.rows[0]!.calls).toBeLessThanOrEqual(2);
    } finally {
      await client.query('rollback');
      client.release();
    }
  });
});
