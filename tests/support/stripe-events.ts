// Test support: realistic Stripe event envelopes (current API version shapes) and signing with
// the real stripe SDK's generateTestHeaderString.
import Stripe from 'stripe';
import { randomBytes } from 'node:crypto';

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
