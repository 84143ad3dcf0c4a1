// In charge of signing outgoing webhooks the Standard Webhooks way: the signature is an
// HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<body>" keyed with the secret's base64 part.
import { createHmac } from 'node:crypto';

/** The key bytes of a 'whsec_<base64>' secret. */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith('whsec_')) throw new Error('a webhook secret starts with whsec_');
  return Buffer.from(secret.slice('whsec_'.length), 'base64');
}

/** The three Standard Webhooks headers for one attempt. */
export function signedHeaders(
  secret: string,
  webhookId: string,
  body: string,
  now: Date = new Date(),
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const timestamp = Math.floor(now.getTime() / 1000).toString();
  const signature = createHmac('sha256', secretKey(secret))
    .update(`${webhookId}.${timestamp}.${body}`)
    .digest('base64');
  return { 'webhook-id': webhookId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
