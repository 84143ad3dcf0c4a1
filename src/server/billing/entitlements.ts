// In charge of keeping the database's plan limits in step with configuration (the database
// enforces them: db/migrations/0022_entitlements.sql). Run at start-up, after migrations.
import type { Queryable } from '../db/pool.js';
import type { Plan } from './plans.js';

export interface EntitlementSettings {
  freeSeats: number | null;
  freeProjects: number | null;
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
}
