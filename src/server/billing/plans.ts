// In charge of the plan catalogue from configuration: which Stripe price means which plan.
// BILLING_PLANS is a JSON array such as
// [{"id":"pro","name":"Pro","priceId":"price_123","seats":25,"projects":500}].
import { z } from 'zod';

export const planSchema = z.object({
  id: z.string().regex(/^[a-z][a-z0-9_-]{0,39}$/, 'plan ids are lowercase words'),
  name: z.string().min(1).max(80),
  priceId: z.string().regex(/^price_[A-Za-z0-9_]+$/, 'must be a Stripe price id (price_…)'),
  /** members plus pending invitations; omitted or null = unlimited */
  seats: z.number().int().positive().nullable().default(null),
  /** projects per workspace; omitted or null = unlimited */
  projects: z.number().int().nonnegative().nullable().default(null),
});
export type Plan = z.infer<typeof planSchema>;

export const plansSchema = z.array(planSchema).refine((plans) => !plans.some((p) => p.id === 'free'), {
  message: '"free" is the built-in plan and cannot be configured',
});

export function planForPrice(plans: readonly Plan[], priceId: string | null | undefined): string {
  return plans.find((p) => p.priceId === priceId)?.id ?? 'unknown';
}
