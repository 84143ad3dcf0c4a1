// In charge of keeping the database's plan limits in step with configuration (the database
// enforces them: db/migrations/0022_entitlements.sql). Run at start-up, after migrations.
import type { Queryable } from '../db/pool.js';
import type { Plan, ResourceLimits } from './plans.js';

export interface EntitlementSettings {
  freeSeats: number | null;
  freeProjects: number | null;
  /** the free plan's limits of the team's own tables (FREE_PLAN_LIMITS) */
  freeLimits?: ResourceLimits;
  plans: readonly Plan[];
  graceDays: number;
}

export async function syncEntitlements(db: Queryable, settings: EntitlementSettings): Promise<void> {
  const rows = [
    { plan: 'free', seats: settings.freeSeats, projects: settings.freeProjects },
    ...settings.plans.map((p) => ({ plan: p.id, seats: p.seats, projects: p.projects })),
  ];
  await db.query(
    `with input as (
       select * from unnest($1::text[], $2::int[], $3::int[]) as t(plan, seats, projects)
     ), upserted as (
       insert into internal.plan_limits (plan, seats, projects) select plan, seats, projects from input
       on conflict (plan) do update set seats = excluded.seats, projects = excluded.projects
     ), settings as (
       update internal.billing_settings set grace_days = $4
     )
     delete from internal.plan_limits where plan <> all ($1::text[])`,
    [rows.map((r) => r.plan), rows.map((r) => r.seats), rows.map((r) => r.projects), settings.graceDays],
  );
  // The team's own tables' limits: replaced whole, so a limit removed from configuration goes.
  const limits = [
    ...Object.entries(settings.freeLimits ?? {}).map(([resource, max]) => ({ plan: 'free', resource, max })),
    ...settings.plans.flatMap((p) =>
      Object.entries(p.limits ?? {}).map(([resource, max]) => ({ plan: p.id, resource, max })),
    ),
  ];
  await db.query(
    `with input as (
       select * from unnest($1::text[], $2::text[], $3::int[]) as t(plan, resource, max_rows)
     ), cleared as (
       delete from internal.plan_resource_limits l
       where not exists (select 1 from input i where i.plan = l.plan and i.resource = l.resource)
     )
     insert into internal.plan_resource_limits (plan, resource, max_rows) select plan, resource, max_rows from input
     on conflict (plan, resource) do update set max_rows = excluded.max_rows`,
    [limits.map((l) => l.plan), limits.map((l) => l.resource), limits.map((l) => l.max)],
  );
}
