// The activity log, change by change: every change to a workspace writes exactly the expected
// event, with its actor, in the same transaction; and no client can write the log itself.
// The steps run in order on one workspace, each one its own test so a missing event is named.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createPool, type Pool } from '../../src/server/db/pool.js';
import { withService, type Tx } from '../../src/server/db/transactions.js';
import { createTestDatabase } from '../support/server.js';
import { asUser, attempt, createUser, type TestUser } from '../support/tenancy.js';

type Who = 'owner' | 'admin' | 'member' | 'invitee' | 'service';

interface Cast {
  owner: TestUser;
  admin: TestUser;
  member: TestUser;
  invitee: TestUser;
  workspaceId: string;
  /** values carried from one step to the next (tokens, ids) */
  state: Record<string, string>;
}

interface Step {
  change: string;
  by: Who;
  run: (tx: Tx, c: Cast) => Promise<void>;
  /** the events this change writes, in order, and whose id is their actor (null = no user) */
  events: [action: string, actor: Who | null][];
}

/** Calls a function and returns its value as JSON. */
const one = async (tx: Tx, sql: string, params: unknown[]) =>
  (await tx.query<{ r: Record<string, string> }>(`select to_json(${sql}) as r`, params)).rows[0]!.r;

const STEPS: Step[] = [
  {
    change: 'create a workspace',
    by: 'owner',
    run: async (tx, c) => {
      c.workspaceId = (await one(tx, 'public.create_workspace($1)', ['Logbook'])).id!;
    },
    events: [
      ['workspace.created', 'owner'],
      ['member.added', 'owner'],
    ],
  },
  {
    change: 'add members (server side, no user acting)',
    by: 'service',
    run: async (tx, c) => {
      await tx.query(`insert into public.workspace_members values ($1, $2, 'admin'), ($1, $3, 'member')`, [
        c.workspaceId,
        c.admin.id,
        c.member.id,
      ]);
    },
    events: [
      ['member.added', null],
      ['member.added', null],
    ],
  },
  {
    change: 'rename the workspace (direct update)',
    by: 'admin',
    run: async (tx, c) => {
      await tx.query(`update public.workspaces set name = 'Logbook 2' where id = $1`, [c.workspaceId]);
    },
    events: [['workspace.updated', 'admin']],
  },
  {
    change: 'an update that changes nothing',
    by: 'admin',
    run: async (tx, c) => {
      await tx.query(`update public.workspaces set name = name where id = $1`, [c.workspaceId]);
    },
    events: [],
  },
  {
    change: 'invite',
    by: 'admin',
    run: async (tx, c) => {
      const inv = await one(tx, 'public.invite_member($1, $2, $3)', [
        c.workspaceId,
        c.invitee.email,
        'viewer',
      ]);
      c.state.token = inv.token!;
      c.state.invitationId = inv.invitation_id!;
    },
    events: [['invitation.created', 'admin']],
  },
  {
    change: 'resend',
    by: 'owner',
    run: async (tx, c) => {
      c.state.token = (await one(tx, 'public.resend_invitation($1)', [c.state.invitationId])).token!;
    },
    events: [['invitation.resent', 'owner']],
  },
  {
    change: 'accept',
    by: 'invitee',
    run: async (tx, c) => {
      await one(tx, 'public.accept_invitation($1)', [c.state.token]);
    },
    // One line per acceptance: the joining it brought is not told again.
    events: [['invitation.accepted', 'invitee']],
  },
  {
    change: 'change a role',
    by: 'admin',
    run: async (tx, c) => {
      await one(tx, 'public.update_member_role($1, $2, $3)', [c.workspaceId, c.invitee.id, 'member']);
    },
    events: [['member.role_changed', 'admin']],
  },
  {
    change: 'remove a member',
    by: 'admin',
    run: async (tx, c) => {
      await one(tx, 'public.remove_member($1, $2)', [c.workspaceId, c.invitee.id]);
    },
    events: [['member.removed', 'admin']],
  },
  {
    change: 'revoke',
    by: 'owner',
    run: async (tx, c) => {
      const inv = await one(tx, 'public.invite_member($1, $2, $3)', [
        c.workspaceId,
        'nobody@example.com',
        'member',
      ]);
      await one(tx, 'public.revoke_invitation($1)', [inv.invitation_id]);
    },
    events: [
      ['invitation.created', 'owner'],
      ['invitation.revoked', 'owner'],
    ],
  },
  {
    change: 'create, edit and delete a project',
    by: 'member',
    run: async (tx, c) => {
      const p = await tx.query<{ id: string }>(
        `insert into public.projects (workspace_id, name) values ($1, 'Apollo') returning id`,
        [c.workspaceId],
      );
      await tx.query(`update public.projects set description = 'to the moon' where id = $1`, [p.rows[0]!.id]);
      await tx.query(`delete from public.projects where id = $1`, [p.rows[0]!.id]);
    },
    events: [
      ['project.created', 'member'],
      ['project.updated', 'member'],
      ['project.deleted', 'member'],
    ],
  },
  {
    change: 'leave',
    by: 'member',
    run: async (tx, c) => {
      await one(tx, 'public.leave_workspace($1)', [c.workspaceId]);
    },
    events: [['member.left', 'member']],
  },
];

let pool: Pool;
const cast = {} as Cast;
let seen = 0;

beforeAll(async () => {
  pool = createPool(await createTestDatabase(), { max: 4 });
  const [owner, admin, member, invitee] = await Promise.all(
    ['owner', 'admin', 'member', 'invitee'].map((l) => createUser(pool, l)),
  );
  Object.assign(cast, { owner, admin, member, invitee, workspaceId: '', state: {} });
});
afterAll(async () => pool?.end());

const actorId = (who: Who | null) => (who === null || who === 'service' ? null : cast[who].id);

async function eventsSince(count: number) {
  const r = await pool.query<{ action: string; actor_id: string | null }>(
    'select action, actor_id from public.activity_events where workspace_id = $1 order by id',
    [cast.workspaceId],
  );
  return r.rows.slice(count);
}

describe('every change writes its activity event', () => {
  test.each(STEPS)('$change ($by)', async ({ by, run, events }) => {
    if (by === 'service') await withService(pool, (tx) => run(tx, cast));
    else await asUser(pool, cast[by], (tx) => run(tx, cast));
    const written = await eventsSince(seen);
    seen += written.length;
    expect(written).toEqual(events.map(([action, actor]) => ({ action, actor_id: actorId(actor) })));
  });

  test('decline (the invitee answers an invitation)', async () => {
    const inv = await asUser(pool, cast.owner, (tx) =>
      one(tx, 'public.invite_member($1, $2, $3)', [cast.workspaceId, cast.invitee.email, 'viewer']),
    );
    await asUser(pool, cast.invitee, (tx) => one(tx, 'public.decline_invitation($1)', [inv.token]));
    const written = await eventsSince(seen);
    seen += written.length;
    expect(written).toEqual([
      { action: 'invitation.created', actor_id: cast.owner.id },
      { action: 'invitation.declined', actor_id: cast.invitee.id },
    ]);
  });

  test('a change that fails writes no event (same transaction)', async () => {
    const failed = await attempt(pool, cast.owner, 'select public.leave_workspace($1)', [cast.workspaceId]);
    expect(failed).toMatchObject({ ok: false, code: 'P0001' });
    expect(await eventsSince(seen)).toEqual([]);
  });
});

describe('the log is append-only for clients', () => {
  const writes: [string, string][] = [
    ['insert', `insert into public.activity_events (workspace_id, action) values ($1, 'forged')`],
    ['update', `update public.activity_events set action = 'forged' where workspace_id = $1`],
    ['delete', `delete from public.activity_events where workspace_id = $1`],
    ['call the internal writer', `select internal.log_activity($1, 'forged', null, null)`],
  ];
  test.each(writes)('the owner cannot %s', async (_label, sql) => {
    const outcome = await attempt(pool, cast.owner, sql, [cast.workspaceId]);
    expect(outcome).toMatchObject({ ok: false, code: '42501' });
  });
});
