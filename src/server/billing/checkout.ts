// In charge of sending an owner to Stripe: a Checkout session in subscription mode for a plan's
// price (the workspace id travels as client_reference_id and in the subscription's metadata, so
// every later event names its workspace), and a customer-portal session; both come back to the
// workspace's stable billing link (links.ts), which outlives a change of slug. One Stripe customer
// per workspace, created on first checkout and reused. Only owners may do either (checked in the
// database, as the caller). Billing is optional: without STRIPE_SECRET_KEY these refuse clearly.
import Stripe from 'stripe';
import type { Pool } from '../db/pool.js';
import { withRls, type Claims } from '../db/transactions.js';
import { HttpError } from '../http/errors.js';
import { billingUrl } from './links.js';
import type { Plan } from './plans.js';

export interface BillingOptions {
  pool: Pool;
  plans: readonly Plan[];
  appUrl: string;
  stripeSecretKey: string | undefined;
  /** e.g. http://127.0.0.1:12111 for a local stand-in of the Stripe API */
  stripeApiBase: string | undefined;
}

export function createStripeClient(secretKey: string, apiBase?: string): Stripe {
  if (!apiBase) return new Stripe(secretKey, { maxNetworkRetries: 2 });
  const url = new URL(apiBase);
  return new Stripe(secretKey, {
    host: url.hostname,
    port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    protocol: url.protocol.replace(':', '') as 'http' | 'https',
    maxNetworkRetries: 0,
  });
}

export class Billing {
  private readonly stripe: Stripe | null;

  constructor(private readonly options: BillingOptions) {
    this.stripe = options.stripeSecretKey
      ? createStripeClient(options.stripeSecretKey, options.stripeApiBase)
      : null;
  }

  get configured(): boolean {
    return this.stripe !== null;
  }

  private requireStripe(): Stripe {
    if (!this.stripe) {
      throw new HttpError(503, 'Billing is not configured on this server', {
        code: 'billing_not_configured',
      });
    }
    return this.stripe;
  }

  /** The workspace's billing row, if the caller owns the workspace (otherwise 403 / 404). */
  private async ownedWorkspace(claims: Claims, workspaceId: string) {
    return withRls(this.options.pool, claims, async (tx) => {
      const role = await tx.query<{ role: string | null }>('select internal.my_role($1) as role', [
        workspaceId,
      ]);
      const mine = role.rows[0]?.role;
      if (!mine) throw new HttpError(404, 'Workspace not found', { code: 'not_found' });
      if (mine !== 'owner') throw new HttpError(403, 'Only owners manage billing', { code: 'forbidden' });
      const row = await tx.query<{ name: string; stripe_customer_id: string | null }>(
        `select w.name, s.stripe_customer_id from public.workspaces w
         join public.subscriptions s on s.workspace_id = w.id where w.id = $1`,
        [workspaceId],
      );
      return row.rows[0]!;
    });
  }

  private async customerFor(
    stripe: Stripe,
    workspaceId: string,
    name: string,
    existing: string | null,
    email: string,
  ) {
    if (existing) return existing;
    const customer = await stripe.customers.create(
      { name, email, metadata: { workspace_id: workspaceId } },
      // Two owners clicking at once create one customer.
      { idempotencyKey: `tenantry-customer-${workspaceId}` },
    );
    // Keep the first customer if another request linked one meanwhile.
    const stored = await this.options.pool.query<{ stripe_customer_id: string }>(
      `update public.subscriptions set stripe_customer_id = coalesce(stripe_customer_id, $2), updated_at = now()
       where workspace_id = $1 returning stripe_customer_id`,
      [workspaceId, customer.id],
    );
    return stored.rows[0]!.stripe_customer_id;
  }

  async startCheckout(
    claims: Claims & { email?: unknown },
    workspaceId: string,
    planId: string,
  ): Promise<string> {
    const stripe = this.requireStripe();
    const plan = this.options.plans.find((p) => p.id === planId);
    if (!plan) throw new HttpError(400, `Unknown plan "${planId}"`, { code: 'unknown_plan' });
    const workspace = await this.ownedWorkspace(claims, workspaceId);
    const customer = await this.customerFor(
      stripe,
      workspaceId,
      workspace.name,
      workspace.stripe_customer_id,
      typeof claims.email === 'string' ? claims.email : '',
    );
    const session = await stripe.checkout.sessions.create({
      mode: 'subscription',
      customer,
      client_reference_id: workspaceId,
      line_items: [{ price: plan.priceId, quantity: 1 }],
      subscription_data: { metadata: { workspace_id: workspaceId } },
      metadata: { workspace_id: workspaceId },
      success_url: billingUrl(this.options.appUrl, workspaceId, 'success'),
      cancel_url: billingUrl(this.options.appUrl, workspaceId, 'cancelled'),
    });
    if (!session.url) throw new Error('Stripe returned a checkout session without a URL');
    return session.url;
  }

  async openPortal(claims: Claims, workspaceId: string): Promise<string> {
    const stripe = this.requireStripe();
    const workspace = await this.ownedWorkspace(claims, workspaceId);
    if (!workspace.stripe_customer_id) {
      throw new HttpError(409, 'This workspace has no billing account yet: start a checkout first', {
        code: 'no_customer',
      });
    }
    const session = await stripe.billingPortal.sessions.create({
      customer: workspace.stripe_customer_id,
      return_url: billingUrl(this.options.appUrl, workspaceId),
    });
    return session.url;
  }
}
