// In charge of the plan catalogue from configuration: which Stripe price means which plan.
// BILLING_PLANS is a JSON array such as
// [{"id":"pro","name":"Pro","priceId":"price_123","price":"$29 a month","seats":25,"projects":500,
//   "features":["Priority support"],"limits":{"tasks":5000}}]. `price` and `features` are what
// customers read on the billing page, in the operator's words (Stripe is not asked at every view).
import { z } from 'zod';

/**
 * Limits of the team's own tables, by resource name ({"tasks": 500}); null = unlimited. A table
 * opts in with tenantry.enforce_plan_limit('<resource>') (migration 0062).
 */
export const resourceLimitsSchema = z.record(
  z.string().regex(/^[a-z][a-z0-9_]{0,62}$/, 'resource names are lower-case words, like tasks'),
  z.number().int().nonnegative().nullable(),
);
export type ResourceLimits = z.infer<typeof resourceLimitsSchema>;

export const planSchema = z.object({
  id: z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/, 'plan ids are lowercase words'),
  name: z.string().min(1).max(80),
  priceId: z.string().regex(/^price_[A-Za-z0-9_]+$/, 'must be a Stripe price id (price_…)'),
  /** the price as customers read it ("$29 a month"); omitted = not shown */
  price: z.string().trim().min(1).max(60).optional(),
  /** what else the plan includes, one short line each, shown under its limits */
  features: z.array(z.string().trim().min(1).max(120)).max(10).optional(),
  /** members plus pending invitations; omitted or null = unlimited */
  seats: z.number().int().positive().nullable().default(null),
  /** projects per workspace; omitted or null = unlimited */
  projects: z.number().int().nonnegative().nullable().default(null),
  /** bytes of files per workspace in workspace buckets; omitted or null = unlimited */
  storageBytes: z.number().int().nonnegative().nullable().optional(),
  /** rows per workspace of the team's own tables, by the resource their trigger names */
  limits: z.lazy(() => resourceLimitsSchema).optional(),
});
export type Plan = z.infer<typeof planSchema>;

export const plansSchema = z.array(planSchema).refine((plans) => !plans.some((p) => p.id === 'free'), {
  message: '"free" is the built-in plan and cannot be configured',
});

export function planForPrice(plans: readonly Plan[], priceId: string | null | undefined): string {
  return plans.find((p) => p.priceId === priceId)?.id ?? 'unknown';
}
