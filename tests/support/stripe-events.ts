// Test support: realistic Stripe event envelopes (current API version shapes) and signing with
// the real stripe SDK's generateTestHeaderString.
import Stripe from 'stripe';
import { randomBytes } from 'node:crypto';
import { call, type TestServer } from './server.js';

export const API_VERSION = '2026-10-28.endive';

export function eventId(): string {
  return `evt_${randomBytes(12).toString('hex')}`;
}

export function envelope(
  type: string,
  object: Record<string, unknown>,
  options: { id?: string; created?: number; previous?: Record<string, unknown> } = {},
) {
  return {
    id: options.id ?? eventId(),
    object: 'event',
    api_version: API_VERSION,
    created: options.created ?? Math.floor(Date.now() / 1000),
    livemode: false,
    pending_webhooks: 1,
    request: { id: `req_${randomBytes(6).toString('hex')}`, idempotency_key: null },
    type,
    data: { object, ...(options.previous ? { previous_attributes: options.previous } : {}) },
  };
}

export function sign(payload: string, secret: string, timestamp?: number): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp ? { timestamp } : {}) });
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** checkout.session.completed for a subscription checkout of `workspaceId`. */
/** Delivers an event to the server's webhook, signed with its endpoint secret. */
export async function deliverEvent(server: TestServer, event: ReturnType<typeof envelope>) {
  const body = JSON.stringify(event);
  return call(server, 'POST', '/api/billing/webhook', {
    rawBody: body,
    apikey: null,
    headers: { 'stripe-signature': sign(body, server.config.paymentWebhookSecret) },
  });
}

export function checkoutCompleted(workspaceId: string, customer: string, subscription: string) {
  return {
    id: `cs_test_${randomBytes(8).toString('hex')}`,
    object: 'checkout.session',
    mode: 'subscription',
    status: 'complete',
    payment_status: 'paid',
    client_reference_id: workspaceId,
    customer,
    customer_email: null,
    customer_details: { email: 'owner@example.com', name: 'Owner' },
    subscription,
    invoice: `in_${randomBytes(8).toString('hex')}`,
    metadata: {},
    livemode: false,
    created: nowSeconds(),
  };
}

/** A Subscription in the current API shape: the period end lives on each item. */
export function subscriptionObject(options: {
  id: string;
  customer: string;
  workspaceId?: string;
  status?: string;
  priceId?: string;
  periodEnd?: number;
  cancelAtPeriodEnd?: boolean;
}) {
  const periodEnd = options.periodEnd ?? nowSeconds() + 30 * 86400;
  return {
    id: options.id,
    object: 'subscription',
    customer: options.customer,
    status: options.status ?? 'active',
    cancel_at_period_end: options.cancelAtPeriodEnd ?? false,
    cancel_at: null,
    canceled_at: null,
    ended_at: null,
    trial_start: null,
    trial_end: null,
    latest_invoice: `in_${randomBytes(8).toString('hex')}`,
    metadata: options.workspaceId ? { workspace_id: options.workspaceId } : {},
    items: {
      object: 'list',
      data: [
        {
          id: `si_${randomBytes(6).toString('hex')}`,
          object: 'subscription_item',
          quantity: 1,
          current_period_start: periodEnd - 30 * 86400,
          current_period_end: periodEnd,
          price: {
            id: options.priceId ?? 'price_pro_monthly',
            object: 'price',
            product: 'prod_pro',
            lookup_key: null,
            recurring: { interval: 'month' },
            unit_amount: 2900,
            currency: 'usd',
          },
        },
      ],
    },
  };
}

/** An Invoice in the current API shape: the subscription lives under parent.subscription_details. */
export function invoiceObject(options: {
  subscription: string;
  customer: string;
  workspaceId?: string;
  status: 'paid' | 'open';
  periodEnd?: number;
}) {
  const periodEnd = options.periodEnd ?? nowSeconds() + 30 * 86400;
  return {
    id: `in_${randomBytes(8).toString('hex')}`,
    object: 'invoice',
    customer: options.customer,
    status: options.status,
    billing_reason: 'subscription_cycle',
    amount_due: 2900,
    amount_paid: options.status === 'paid' ? 2900 : 0,
    currency: 'usd',
    attempt_count: options.status === 'paid' ? 1 : 2,
    next_payment_attempt: options.status === 'paid' ? null : nowSeconds() + 86400,
    hosted_invoice_url: 'https://invoice.stripe.com/i/test',
    period_start: periodEnd - 30 * 86400,
    period_end: periodEnd,
    parent: {
      type: 'subscription_details',
      subscription_details: {
        subscription: options.subscription,
        metadata: options.workspaceId ? { workspace_id: options.workspaceId } : {},
      },
    },
    lines: {
      object: 'list',
      data: [
        {
          id: `il_${randomBytes(6).toString('hex')}`,
          object: 'line_item',
          amount: 2900,
          period: { start: periodEnd - 30 * 86400, end: periodEnd },
          pricing: {
            type: 'price_details',
            price_details: { price: 'price_pro_monthly', product: 'prod_pro' },
          },
        },
      ],
    },
  };
}
