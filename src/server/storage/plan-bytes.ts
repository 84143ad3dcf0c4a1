// In charge of keeping the database's storage limit per plan in step with configuration
// (FREE_PLAN_STORAGE_BYTES, BILLING_PLANS' storageBytes); the database enforces it on every write
// to a workspace bucket (migration 0070). Run at start-up, after migrations.
import type { Queryable } from '../db/pool.js';

export interface PlanStorageLimit {
  plan: string;
  /** null = unlimited */
  maxBytes: number | null;
}

export async function syncPlanStorageLimits(
  db: Queryable,
  limits: readonly PlanStorageLimit[],
): Promise<void> {
  await db.query(
    `with input as (select * from unnest($1::text[], $2::bigint[]) as t(plan, max_bytes)),
     cleared as (delete from internal.plan_storage_limits l where not exists (select 1 from input i where i.plan = l.plan))
     insert into internal.plan_storage_limits (plan, max_bytes) select plan, max_bytes from input
     on conflict (plan) do update set max_bytes = excluded.max_bytes`,
    [limits.map((l) => l.plan), limits.map((l) => l.maxBytes)],
  );
}
