// The row-level security matrix: every exposed table x every kind of caller x every operation,
// with the expected outcome of each cell written down as a table.
//   rows   = the row is visible          empty  = the statement succeeds and sees nothing
//   ok     = exactly one row changed     none   = the statement succeeds and changes nothing
//   denied = permission error (42501)
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { createTestDatabase } from '../support/server.js';
import { attempt, buildWorld, type TestUser, type World } from '../support/tenancy.js';

type Actor = 'anon' | 'nonMember' | 'viewer' | 'member' | 'admin' | 'owner';
type Op = 'select' | 'insert' | 'update' | 'delete';
type Expected = 'rows' | 'empty' | 'ok' | 'none' | 'denied';

const ACTORS: Actor[] = ['anon', 'nonMember', 'viewer', 'member', 'admin', 'owner'];

//                                  anon      nonMember viewer    member    admin     owner
const MATRIX: Record<string, Record<Op, Expected[]>> = {
  workspaces: {
    select: /*               */ ['denied', 'empty', 'rows', 'rows', 'rows', 'rows'],
    insert: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
    update: /*               */ ['denied', 'none', 'none', 'none', 'ok', 'ok'],
    delete: /*               */ ['denied', 'none', 'none', 'none', 'none', 'ok'],
  },
  workspace_members: {
    select: /*               */ ['denied', 'empty', 'rows', 'rows', 'rows', 'rows'],
    insert: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
    update: /*               */ ['denied', 'none', 'none', 'none', 'ok', 'ok'],
    delete: /*               */ ['denied', 'none', 'none', 'none', 'ok', 'ok'],
  },
  invitations: {
    select: /*               */ ['denied', 'empty', 'empty', 'empty', 'rows', 'rows'],
    insert: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
    update: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
    delete: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
  },
  profiles: {
    select: /*               */ ['denied', 'empty', 'rows', 'rows', 'rows', 'rows'],
    insert: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
    update: /*               */ ['denied', 'none', 'none', 'none', 'none', 'none'],
    delete: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
  },
  notification_preferences: {
    select: /*               */ ['denied', 'empty', 'empty', 'empty', 'empty', 'empty'],
    insert: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
    update: /*               */ ['denied', 'none', 'none', 'none', 'none', 'none'],
    delete: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
  },
  activity_events: {
    select: /*               */ ['denied', 'empty', 'rows', 'rows', 'rows', 'rows'],
    insert: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
    update: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
    delete: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
  },
  audit_events: {
    select: /*               */ ['denied', 'empty', 'empty', 'empty', 'rows', 'rows'],
    insert: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
    update: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
    delete: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
  },
  subscriptions: {
    select: /*               */ ['denied', 'empty', 'rows', 'rows', 'rows', 'rows'],
    insert: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
    update: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
    delete: /*               */ ['denied', 'denied', 'denied', 'denied', 'denied', 'denied'],
  },
  projects: {
    select: /*               */ ['denied', 'empty', 'rows', 'rows', 'rows', 'rows'],
    insert: /*               */ ['denied', 'denied', 'denied', 'ok', 'ok', 'ok'],
    update: /*               */ ['denied', 'none', 'none', 'ok', 'ok', 'ok'],
    delete: /*               */ ['denied', 'none', 'none', 'ok', 'ok', 'ok'],
  },
};

/** The statement each cell runs: one row of the shared workspace (the "extra" viewer where a user is targeted). */
function statement(table: string, op: Op, w: World): [string, unknown[]] {
  const ws = w.workspaceId;
  const t = `public.${table}`;
  switch (`${table}.${op}`) {
    case 'workspaces.select':
      return [`select id from ${t} where id = $1`, [ws]];
    case 'workspaces.insert':
      return [
        `insert into ${t} (name, slug) values ('Sneaky', 'sneaky-' || floor(random() * 1e9)::text)`,
        [],
      ];
    case 'workspaces.update':
      return [`update ${t} set name = 'Renamed' where id = $1`, [ws]];
    case 'workspaces.delete':
      return [`delete from ${t} where id = $1`, [ws]];
    case 'workspace_members.select':
      return [`select user_id from ${t} where workspace_id = $1`, [ws]];
    case 'workspace_members.insert':
      return [`insert into ${t} (workspace_id, user_id, role) values ($1, auth.uid(), 'owner')`, [ws]];
    case 'workspace_members.update':
      return [`update ${t} set role = 'member' where workspace_id = $1 and user_id = $2`, [ws, w.extra.id]];
    case 'workspace_members.delete':
      return [`delete from ${t} where workspace_id = $1 and user_id = $2`, [ws, w.extra.id]];
    case 'invitations.select':
      return [`select id from ${t} where workspace_id = $1`, [ws]];
    case 'invitations.insert':
      return [
        `insert into ${t} (workspace_id, email, role, expires_at) values ($1, 'x@example.com', 'owner', now() + interval '1 day')`,
        [ws],
      ];
    case 'invitations.update':
      return [`update ${t} set role = 'owner' where id = $1`, [w.invitationId]];
    case 'invitations.delete':
      return [`delete from ${t} where id = $1`, [w.invitationId]];
    case 'profiles.select':
      return [`select id from ${t} where id = $1`, [w.extra.id]];
    case 'profiles.insert':
      return [`insert into ${t} (id, email) values (gen_random_uuid(), 'x@example.com')`, []];
    case 'profiles.update':
      return [`update ${t} set display_name = 'Hacked' where id = $1`, [w.extra.id]];
    case 'profiles.delete':
      return [`delete from ${t} where id = $1`, [w.extra.id]];
    case 'notification_preferences.select':
      return [`select user_id from ${t} where user_id = $1`, [w.extra.id]];
    case 'notification_preferences.insert':
      return [`insert into ${t} (user_id) values ($1)`, [w.extra.id]];
    case 'notification_preferences.update':
      return [`update ${t} set digest_frequency = 'off' where user_id = $1`, [w.extra.id]];
    case 'notification_preferences.delete':
      return [`delete from ${t} where user_id = $1`, [w.extra.id]];
    case 'activity_events.select':
      return [`select id from ${t} where workspace_id = $1`, [ws]];
    case 'activity_events.insert':
      return [`insert into ${t} (workspace_id, action) values ($1, 'forged')`, [ws]];
    case 'activity_events.update':
      return [`update ${t} set action = 'forged' where workspace_id = $1`, [ws]];
    case 'activity_events.delete':
      return [`delete from ${t} where workspace_id = $1`, [ws]];
    case 'audit_events.select':
      return [`select id from ${t} where workspace_id = $1`, [ws]];
    case 'audit_events.insert':
      return [`insert into ${t} (actor_type, workspace_id, action) values ('user', $1, 'forged')`, [ws]];
    case 'audit_events.update':
      return [`update ${t} set action = 'forged' where workspace_id = $1`, [ws]];
    case 'audit_events.delete':
      return [`delete from ${t} where workspace_id = $1`, [ws]];
    case 'subscriptions.select':
      return [`select workspace_id from ${t} where workspace_id = $1`, [ws]];
    case 'subscriptions.insert':
      return [`insert into ${t} (workspace_id, plan) values ($1, 'enterprise')`, [ws]];
    case 'subscriptions.update':
      return [`update ${t} set plan = 'enterprise' where workspace_id = $1`, [ws]];
    case 'subscriptions.delete':
      return [`delete from ${t} where workspace_id = $1`, [ws]];
    case 'projects.select':
      return [`select id from ${t} where id = $1`, [w.projectId]];
    case 'projects.insert':
      return [`insert into ${t} (workspace_id, name) values ($1, 'New project')`, [ws]];
    case 'projects.update':
      return [`update ${t} set name = 'Renamed project' where id = $1`, [w.projectId]];
    case 'projects.delete':
      return [`delete from ${t} where id = $1`, [w.projectId]];
    default:
      throw new Error(`no statement for ${table}.${op}`);
  }
}

let pool: Pool;
let world: World;
beforeAll(async () => {
  pool = createPool(await createTestDatabase(), { max: 8 });
  world = await buildWorld(pool);
});
afterAll(async () => pool?.end());

const actorUser = (actor: Actor): TestUser | null => (actor === 'anon' ? null : world[actor]);

const cells = Object.entries(MATRIX).flatMap(([table, ops]) =>
  (Object.entries(ops) as [Op, Expected[]][]).flatMap(([op, expected]) =>
    ACTORS.map((actor, i) => ({ table, op, actor, expected: expected[i]! })),
  ),
);

describe('RLS matrix', () => {
  test('covers every exposed table', async () => {
    const tables = await pool.query<{ relname: string }>(
      `select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'public' and c.relkind = 'r' order by 1`,
    );
    expect(tables.rows.map((r) => r.relname)).toEqual(Object.keys(MATRIX).sort());
  });

  test.each(cells)('$table $op by $actor -> $expected', async ({ table, op, actor, expected }) => {
    const [sql, params] = statement(table, op, world);
    const outcome = await attempt(pool, actorUser(actor), sql, params);
    const observed: Expected = !outcome.ok
      ? outcome.code === '42501'
        ? 'denied'
        : (`error ${outcome.code}: ${outcome.message}` as Expected)
      : op === 'select'
        ? outcome.rows > 0
          ? 'rows'
          : 'empty'
        : outcome.rows === 1
          ? 'ok'
          : outcome.rows === 0
            ? 'none'
            : (`${outcome.rows} rows` as Expected);
    expect(observed).toBe(expected);
  });
});
