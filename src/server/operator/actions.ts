// In charge of what staff change from the operator console (decision 0096): ban and unban an
// account, delete it, end one or all of its sessions, and put a failed e-mail back in the queue.
// Each runs in one transaction that first checks again that the operator is staff and that their
// session passed a second factor (never trusting the page that offered the button), makes the
// change, and writes its audit line with the operator as actor and details.operator = true: no
// change without its line, no line without its change.
import type { Pool } from '../db/pool.js';
import { withService, type Tx } from '../db/transactions.js';
import type { SessionContext } from '../identity/sessions.js';
import { isStaff } from './staff.js';

/** The staff member acting, from their verified access token and the request. */
export interface Operator {
  userId: string;
  sessionId: string;
  context: SessionContext;
}

/** Refused: the caller is not (or no longer) staff with a second-factor session. */
export class OperatorRefused extends Error {
  constructor() {
    super('Not allowed');
  }
}

/** The change could not be made as asked (a missing account, a message not failed): say why. */
export class OperatorConflict extends Error {}

interface Line {
  action: string;
  userId: string | null;
  targetType: string;
  targetId: string;
  details?: Record<string, unknown>;
}

/** Whether this operator may act now: staff, and this very session at aal2 and still standing. */
export async function operatorStands(
  db: Tx | Pool,
  op: Pick<Operator, 'userId' | 'sessionId'>,
): Promise<boolean> {
  const session = await db.query(
    `select 1 from auth.sessions s join auth.users u on u.id = s.user_id
     where s.id = $1 and s.user_id = $2 and s.aal = 'aal2'
       and (s.not_after is null or s.not_after > now())
       and u.deleted_at is null and (u.banned_until is null or u.banned_until <= now())`,
    [op.sessionId, op.userId],
  );
  return (session.rowCount ?? 0) > 0 && (await isStaff(db, op.userId));
}

async function asOperator<T>(
  pool: Pool,
  op: Operator,
  work: (tx: Tx) => Promise<{ value: T; line: Line }>,
): Promise<T> {
  return withService(pool, async (tx) => {
    if (!(await operatorStands(tx, op))) throw new OperatorRefused();
    const { value, line } = await work(tx);
    await tx.query(
      `insert into public.audit_events (actor_id, actor_type, user_id, action, target_type, target_id,
         ip_address, user_agent, details)
       values ($1, 'user', $2, $3, $4, $5, $6::inet, $7, $8::jsonb)`,
      [
        op.userId,
        line.userId,
        line.action,
        line.targetType,
        line.targetId,
        op.context.ip,
        op.context.userAgent?.slice(0, 512) ?? null,
        JSON.stringify({ ...line.details, operator: true }),
      ],
    );
    return value;
  });
}

async function liveAccount(tx: Tx, userId: string): Promise<{ email: string | null }> {
  const found = await tx.query<{ email: string | null }>(
    'select email from auth.users where id = $1 and deleted_at is null for update',
    [userId],
  );
  if (!found.rows[0]) throw new OperatorConflict('That account does not exist (any more)');
  return found.rows[0];
}

/** A workspace API key's principal is shut out by revoking the key, in its workspace (decision 0091). */
async function notAnApiKey(tx: Tx, userId: string): Promise<void> {
  const key = await tx.query('select 1 from internal.api_keys where id = $1', [userId]);
  if (key.rowCount) throw new OperatorConflict('This is a workspace API key: its workspace revokes it');
}

/** Bans the account until `until` (its sessions end with it, as an administrator's ban does). */
export function banUser(pool: Pool, op: Operator, userId: string, until: Date): Promise<void> {
  return asOperator(pool, op, async (tx) => {
    if (userId === op.userId) throw new OperatorConflict('You cannot ban yourself');
    await liveAccount(tx, userId);
    await notAnApiKey(tx, userId);
    await tx.query('update auth.users set banned_until = $2, updated_at = now() where id = $1', [
      userId,
      until,
    ]);
    const ended = await tx.query('delete from auth.sessions where user_id = $1', [userId]);
    return {
      value: undefined,
      line: {
        action: 'operator.user_banned',
        userId,
        targetType: 'user',
        targetId: userId,
        details: { banned_until: until.toISOString(), sessions_ended: ended.rowCount ?? 0 },
      },
    };
  });
}

export function unbanUser(pool: Pool, op: Operator, userId: string): Promise<void> {
  return asOperator(pool, op, async (tx) => {
    await liveAccount(tx, userId);
    await tx.query('update auth.users set banned_until = null, updated_at = now() where id = $1', [userId]);
    return {
      value: undefined,
      line: { action: 'operator.user_unbanned', userId, targetType: 'user', targetId: userId },
    };
  });
}

/** Deletes the account for good (the database refuses when it would leave a workspace ownerless). */
export async function deleteUser(pool: Pool, op: Operator, userId: string): Promise<void> {
  try {
    await asOperator(pool, op, async (tx) => {
      if (userId === op.userId) throw new OperatorConflict('You cannot delete your own account here');
      const { email } = await liveAccount(tx, userId);
      await notAnApiKey(tx, userId);
      await tx.query('delete from auth.users where id = $1', [userId]);
      return {
        value: undefined,
        line: {
          action: 'operator.user_deleted',
          userId,
          targetType: 'user',
          targetId: userId,
          details: { email },
        },
      };
    });
  } catch (error) {
    const e = error as { code?: string; message?: string };
    if (e.code === 'P0001') throw new OperatorConflict(e.message ?? 'The account cannot be deleted yet');
    throw error;
  }
}

/** Ends one of the account's sessions (its access tokens stop working at once). */
export function revokeSession(pool: Pool, op: Operator, userId: string, sessionId: string): Promise<void> {
  return asOperator(pool, op, async (tx) => {
    const ended = await tx.query('delete from auth.sessions where id = $1 and user_id = $2', [
      sessionId,
      userId,
    ]);
    if (!ended.rowCount) throw new OperatorConflict('That session has already ended');
    return {
      value: undefined,
      line: { action: 'operator.session_revoked', userId, targetType: 'session', targetId: sessionId },
    };
  });
}

/** Ends every session of the account; answers how many there were. */
export function revokeAllSessions(pool: Pool, op: Operator, userId: string): Promise<number> {
  return asOperator(pool, op, async (tx) => {
    await liveAccount(tx, userId);
    if (userId === op.userId) throw new OperatorConflict('Sign yourself out from your own Security page');
    const ended = await tx.query('delete from auth.sessions where user_id = $1', [userId]);
    const count = ended.rowCount ?? 0;
    return {
      value: count,
      line: {
        action: 'operator.sessions_revoked',
        userId,
        targetType: 'user',
        targetId: userId,
        details: { sessions_ended: count },
      },
    };
  });
}

/** Puts a message the worker gave up on back in the queue, to be tried again now. */
export function retryMail(pool: Pool, op: Operator, outboxId: string): Promise<void> {
  return asOperator(pool, op, async (tx) => {
    const retried = await tx.query<{ to_address: string; kind: string; attempts: number }>(
      `update internal.outbox o set failed_at = null, available_at = now(), leased_until = null, attempts = 0
       from (select id, attempts from internal.outbox where id = $1 for update) before
       where o.id = before.id and o.failed_at is not null and o.sent_at is null
       returning o.to_address, o.kind, before.attempts`,
      [outboxId],
    );
    const row = retried.rows[0];
    if (!row) throw new OperatorConflict('Only a failed message can be tried again');
    return {
      value: undefined,
      line: {
        action: 'operator.mail_retried',
        userId: null,
        targetType: 'mail',
        targetId: outboxId,
        details: { kind: row.kind, to: row.to_address, attempts_before: row.attempts },
      },
    };
  });
}

/**
 * Reads audit lines for an export and records the export, in one transaction: no file leaves the
 * console without its line. `read` runs the caller's query in that transaction.
 */
export function exportAuditLines<T>(
  pool: Pool,
  op: Operator,
  format: 'csv' | 'json',
  read: (tx: Tx) => Promise<T[]>,
): Promise<T[]> {
  return asOperator(pool, op, async (tx) => {
    const lines = await read(tx);
    return {
      value: lines,
      line: {
        action: 'audit.exported',
        userId: null,
        targetType: 'audit_log',
        targetId: 'all',
        details: { format, rows: lines.length },
      },
    };
  });
}
