// Test support for the tenancy model: users created the way sign-up creates them, and acting as a
// user (or anonymously) under row-level security, exactly as the data API does.
import { randomUUID } from 'node:crypto';
import type { Pool } from '../../src/server/db/pool.js';
import { withRls, withService, type Claims, type Tx } from '../../src/server/db/transactions.js';

export interface TestUser {
  id: string;
  email: string;
}

export async function createUser(pool: Pool, label = 'user'): Promise<TestUser> {
  const email = `${label}-${randomUUID().slice(0, 8)}@example.com`;
  const id = await withService(pool, async (tx) => {
    const r = await tx.query<{ id: string }>(
      `insert into auth.users (email, email_confirmed_at) values ($1, now()) returning id`,
      [email],
    );
    return r.rows[0]!.id;
  });
  return { id, email };
}

export function claimsFor(user: TestUser | null): Claims {
  return user ? { role: 'authenticated', sub: user.id, email: user.email } : { role: 'anon' };
}

/** Runs fn as the user (null = anonymous) and commits. */
export function asUser<T>(pool: Pool, user: TestUser | null, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return withRls(pool, claimsFor(user), fn);
}

/** Calls a public function as the user and returns its single value. */
export async function rpc<T = unknown>(
  pool: Pool,
  user: TestUser | null,
  sql: string,
  params: unknown[] = [],
): Promise<T> {
  return asUser(pool, user, async (tx) => {
    const r = await tx.query<{ result: T }>(`select to_json(${sql}) as result`, params);
    return r.rows[0]!.result;
  });
}

class Rollback extends Error {}

export type Outcome = { ok: true; rows: number } | { ok: false; code: string; message: string };

/** Runs one statement as the user and always rolls back, reporting rows affected or the error. */
export async function attempt(
  pool: Pool,
  user: TestUser | null,
  sql: string,
  params: unknown[] = [],
): Promise<Outcome> {
  let outcome: Outcome | undefined;
  try {
    await withRls(pool, claimsFor(user), async (tx) => {
      const r = await tx.query(sql, params);
      outcome = { ok: true, rows: r.rowCount ?? 0 };
      throw new Rollback();
    });
  } catch (error) {
    if (error instanceof Rollback) return outcome!;
    const e = error as { code?: string; message?: string };
    return { ok: false, code: e.code ?? 'unknown', message: e.message ?? '' };
  }
  throw new Error('unreachable');
}

export interface World {
  workspaceId: string;
  owner: TestUser;
  admin: TestUser;
  member: TestUser;
  viewer: TestUser;
  nonMember: TestUser;
  /** a viewer the matrix acts upon */
  extra: TestUser;
  projectId: string;
  invitationId: string;
}

/** One workspace with one user per role, a project, and a pending invitation. */
export async function buildWorld(pool: Pool): Promise<World> {
  const [owner, admin, member, viewer, nonMember, extra] = await Promise.all(
    ['owner', 'admin', 'member', 'viewer', 'outsider', 'extra'].map((l) => createUser(pool, l)),
  );
  const workspace = await rpc<{ id: string }>(pool, owner!, `public.create_workspace($1)`, ['Matrix Co']);
  const workspaceId = workspace.id;
  await withService(pool, async (tx) => {
    for (const [user, role] of [
      [admin, 'admin'],
      [member, 'member'],
      [viewer, 'viewer'],
      [extra, 'viewer'],
    ] as const) {
      await tx.query(
        'insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, $3)',
        [workspaceId, user!.id, role],
      );
    }
  });
  const project = await asUser(pool, member!, async (tx) => {
    const r = await tx.query<{ id: string }>(
      `insert into public.projects (workspace_id, name) values ($1, 'Seed project') returning id`,
      [workspaceId],
    );
    return r.rows[0]!.id;
  });
  const invitation = await rpc<{ invitation_id: string }>(
    pool,
    owner!,
    `public.invite_member($1, $2, 'member')`,
    [workspaceId, `invitee-${randomUUID().slice(0, 8)}@example.com`],
  );
  return {
    workspaceId,
    owner: owner!,
    admin: admin!,
    member: member!,
    viewer: viewer!,
    nonMember: nonMember!,
    extra: extra!,
    projectId: project,
    invitationId: invitation.invitation_id,
  };
}
