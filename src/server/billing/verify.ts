// In charge of authenticating payment-provider webhooks: the Stripe-Signature header is checked
// over the exact raw body with the stripe SDK (HMAC-SHA256, constant-time, 300 s tolerance on
// either side of this clock), then the payload must be a well-formed event. Missing signature or
// bad payload: 400; failed verification: 401.
import Stripe from 'stripe';
import { z } from 'zod';
import { HttpError } from '../http/errors.js';

export const SIGNATURE_TOLERANCE_SECONDS = 300;

const utf8 = new TextDecoder('utf-8');

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

// data.object is checked to be an object, not copied key by key as z.record would (a Stripe
// object has dozens of keys, and the handlers read the few they need with their own checks).
const eventShape = z.object({
  id: z.string().regex(/^evt_[A-Za-z0-9_]+$/, 'event id must look like evt_…'),
  object: z.literal('event'),
  type: z.string().min(1).max(200),
  created: z.number().int().positive(),
  data: z.object({
    object: z.custom<Record<string, unknown>>(isPlainObject, 'data.object must be an object'),
    previous_attributes: z.unknown().optional(),
  }),
});

export type VerifiedEvent = z.infer<typeof eventShape>;

/** A verified event and the exact text the provider signed (kept as the event's record). */
export interface VerifiedDelivery {
  event: VerifiedEvent;
  payload: string;
}

function badRequest(code: string, message: string) {
  return new HttpError(400, message, { code });
}

/** Messages of stripe's verifier that mean "no usable signature was sent" rather than "it did not match". */
const MISSING_SIGNATURE = [
  /No stripe-signature header/i,
  /Unable to extract timestamp and signatures/i,
  /No signatures found with expected scheme/i,
];

/** The t= of a Stripe-Signature header the SDK accepted (it refuses a header without one). */
function signedAt(header: string): number {
  for (const part of header.split(',')) {
    const [key, value] = part.split('=', 2);
    if (key?.trim() === 't') return Number.parseInt(value ?? '', 10);
  }
  return Number.NaN;
}

export function verifyWebhook(
  rawBody: Uint8Array,
  signatureHeader: string | null,
  secret: string,
): VerifiedDelivery {
  if (!signatureHeader || signatureHeader.trim() === '') {
    throw badRequest('missing_signature', 'Missing Stripe-Signature header');
  }
  if (rawBody.byteLength === 0) throw badRequest('invalid_payload', 'Empty webhook payload');
  let parsed: unknown;
  // Text, decoded once: given bytes, the SDK copies and decodes them twice (to sign, to parse).
  // It signs and parses the decoded text either way, so the outcome is the same.
  const payload = utf8.decode(rawBody);
  try {
    parsed = Stripe.webhooks.constructEvent(payload, signatureHeader, secret, SIGNATURE_TOLERANCE_SECONDS);
  } catch (error) {
    const message = (error as Error).message ?? '';
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) {
      if (MISSING_SIGNATURE.some((pattern) => pattern.test(message))) {
        throw badRequest('missing_signature', 'Stripe-Signature header has no v1 signature');
      }
      if (/tolerance/i.test(message)) {
        throw new HttpError(401, 'Webhook timestamp is outside the tolerance window', {
          code: 'signature_expired',
        });
      }
      throw new HttpError(401, 'Webhook signature verification failed', { code: 'invalid_signature' });
    }
    // The signature matched but the body is not JSON.
    throw badRequest('invalid_payload', 'Webhook payload is not valid JSON');
  }
  // The SDK bounds only a signature's age; one dated ahead of this clock would stay replayable
  // for as long as it is in the future. Both sides of the window are bounded.
  if (signedAt(signatureHeader) - Math.floor(Date.now() / 1000) > SIGNATURE_TOLERANCE_SECONDS) {
    throw new HttpError(401, 'Webhook timestamp is outside the tolerance window', {
      code: 'signature_expired',
    });
  }
  const event = eventShape.safeParse(parsed);
  if (!event.success) {
    const issue = event.error.issues[0];
    throw badRequest(
      'invalid_payload',
      `Webhook payload is not an event: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim(),
    );
  }
  return { event: event.data, payload };
}
