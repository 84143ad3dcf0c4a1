// In charge of reading a workspace's plan for the billing page: the subscription's state and the
// seats, projects and storage bytes used against the plan's limits (counted as the limits are
// enforced).
import { asUser } from '@/app/lib/db';
import type { SignedIn } from '@/app/lib/session';

export interface BillingState {
  plan: string;
  status: string;
  currentPeriodEnd: Date | null;
  cancelAtPeriodEnd: boolean;
  pastDueSince: Date | null;
  seats: number | null;
  seatsUsed: number;
  projects: number | null;
  projectsUsed: number;
  /** bytes the plan allows in workspace buckets; null = unlimited */
  storage: number | null;
  /** bytes the workspace's files hold */
  storageUsed: number;
  readOnly: boolean;
}

export async function billingState(user: SignedIn, workspaceId: string): Promise<BillingState> {
  return asUser(user, async (tx) => {
    const r = await tx.query<BillingState>(
      `select coalesce(s.plan, 'free') as plan, coalesce(s.status, 'active') as status,
              s.current_period_end as "currentPeriodEnd", coalesce(s.cancel_at_period_end, false) as "cancelAtPeriodEnd",
              s.past_due_since as "pastDueSince",
              u.seats, coalesce(u.seats_used, 0) as "seatsUsed", u.projects, coalesce(u.projects_used, 0) as "projectsUsed",
              coalesce(u.read_only, false) as "readOnly",
              tenantry.storage_bytes_limit(w.id)::float8 as storage,
              tenantry.storage_bytes_used(w.id)::float8 as "storageUsed"
       from (select $1::uuid as id) w
       left join public.subscriptions s on s.workspace_id = w.id
       left join internal.workspace_usage(w.id) u on true`,
      [workspaceId],
    );
    return r.rows[0]!;
  });
}
