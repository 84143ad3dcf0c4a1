// In charge of who is staff for the operator console (internal.operator_staff, decision 0096):
// marking an account as staff, taking it back, listing them, and the one check every console page
// and action makes. Marking and unmarking are themselves lines of the audit log.
import type { Queryable } from '../db/pool.js';
import { withService, type Tx } from '../db/transactions.js';
import type { Pool } from '../db/pool.js';
import { recordAccountEvent } from '../identity/audit.js';
import { normalizeEmail } from '../identity/users.js';

export interface StaffMember {
  userId: string;
  email: string | null;
  grantedAt: Date;
  grantedBy: string;
}

/** Whether the account is staff now (and still a live account: not soft-deleted). */
export async function isStaff(db: Queryable, userId: string): Promise<boolean> {
  const result = await db.query(
    `select 1 from internal.operator_staff s join auth.users u on u.id = s.user_id
     where s.user_id = $1 and u.deleted_at is null`,
    [userId],
  );
  return (result.rowCount ?? 0) > 0;
}

async function accountByEmail(tx: Tx, email: string): Promise<string> {
  const found = await tx.query<{ id: string }>(
    'select id from auth.users where email = $1 and deleted_at is null',
    [normalizeEmail(email)],
  );
  const id = found.rows[0]?.id;
  if (!id) throw new Error(`No account has the address ${email}`);
  return id;
}

/** Marks the account with this address as staff; false when it already was. */
export async function grantStaff(pool: Pool, email: string, grantedBy: string): Promise<boolean> {
  return withService(pool, async (tx) => {
    const userId = await accountByEmail(tx, email);
    const added = await tx.query(
      `insert into internal.operator_staff (user_id, granted_by) values ($1, $2)
       on conflict (user_id) do nothing`,
      [userId, grantedBy.slice(0, 200) || 'operator'],
    );
    if (!added.rowCount) return false;
    await recordAccountEvent(tx, {
      action: 'user_modified',
      userId,
      actor: { type: 'system' },
      details: { operator: true, staff: 'granted', by: grantedBy.slice(0, 200) },
    });
    return true;
  });
}

/** Takes staff away from the account with this address; false when it was not staff. */
export async function revokeStaff(pool: Pool, email: string, revokedBy: string): Promise<boolean> {
  return withService(pool, async (tx) => {
    const userId = await accountByEmail(tx, email);
    const removed = await tx.query('delete from internal.operator_staff where user_id = $1', [userId]);
    if (!removed.rowCount) return false;
    await recordAccountEvent(tx, {
      action: 'user_modified',
      userId,
      actor: { type: 'system' },
      details: { operator: true, staff: 'revoked', by: revokedBy.slice(0, 200) },
    });
    return true;
  });
}

export async function listStaff(db: Queryable): Promise<StaffMember[]> {
  const result = await db.query<{
    user_id: string;
    email: string | null;
    granted_at: Date;
    granted_by: string;
  }>(
    `select s.user_id, u.email, s.granted_at, s.granted_by
     from internal.operator_staff s join auth.users u on u.id = s.user_id
     order by s.granted_at, s.user_id`,
  );
  return result.rows.map((r) => ({
    userId: r.user_id,
    email: r.email,
    grantedAt: new Date(r.granted_at),
    grantedBy: r.granted_by,
  }));
}
