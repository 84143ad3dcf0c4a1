// In charge of the flash message: the one-line outcome a server action leaves for the next page
// ("Project created", or why it was refused), carried in a short-lived cookie that the server
// signs, so pages show only what this server said, never text from a link someone crafted.
// Framework-free: a value in, a message out.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { FLASH_COOKIE, FLASH_MAX_AGE_SECONDS } from './flash-cookie.js';

export { FLASH_COOKIE, FLASH_MAX_AGE_SECONDS };
const MAX_TEXT_LENGTH = 500;
const MAX_VALUE_LENGTH = 2048;

export type FlashKind = 'notice' | 'error';

export interface FlashMessage {
  /** tells one flash from the next, even with the same text */
  id: string;
  kind: FlashKind;
  text: string;
}

interface Payload {
  i: string;
  k: FlashKind;
  t: string;
  /** expiry, seconds since the epoch */
  e: number;
}

/** A key of its own, derived from the service secret, so a flash signature is good for nothing else. */
function flashKey(secret: string): Buffer {
  return createHmac('sha256', secret).update('tenantry flash message v1').digest();
}

function mac(secret: string, body: string): Buffer {
  return createHmac('sha256', flashKey(secret)).update(body).digest();
}

/** The cookie value for a new message. */
export function sealFlash(
  message: { kind: FlashKind; text: string },
  secret: string,
  now = Date.now(),
): { id: string; value: string } {
  const id = randomBytes(9).toString('base64url');
  const payload: Payload = {
    i: id,
    k: message.kind,
    t: message.text.slice(0, MAX_TEXT_LENGTH),
    e: Math.floor(now / 1000) + FLASH_MAX_AGE_SECONDS,
  };
  const body = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64url');
  return { id, value: `${body}.${mac(secret, body).toString('base64url')}` };
}

/** The message in a cookie value, or null when it is missing, expired, malformed or not signed by us. */
export function openFlash(value: string | undefined, secret: string, now = Date.now()): FlashMessage | null {
  if (!value || value.length > MAX_VALUE_LENGTH) return null;
  const dot = value.indexOf('.');
  if (dot <= 0) return null;
  const body = value.slice(0, dot);
  const given = Buffer.from(value.slice(dot + 1), 'base64url');
  const expected = mac(secret, body);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let payload: Partial<Payload>;
  try {
    payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Partial<Payload>;
  } catch {
    return null;
  }
  if (
    typeof payload.i !== 'string' ||
    (payload.k !== 'notice' && payload.k !== 'error') ||
    typeof payload.t !== 'string' ||
    typeof payload.e !== 'number' ||
    payload.e < Math.floor(now / 1000)
  ) {
    return null;
  }
  return { id: payload.i, kind: payload.k, text: payload.t };
}
