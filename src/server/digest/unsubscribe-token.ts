// In charge of one-click unsubscribe links: a compact token, HMAC-signed with a key derived from
// the JWT secret, naming the user and the purpose. It needs no database lookup to verify and
// cannot be forged or repurposed; it does not expire (an old digest's link must keep working).
import { createHmac, hkdfSync } from 'node:crypto';
import { secretsEqual } from '../identity/secrets.js';

export interface UnsubscribeKey {
  key: Buffer;
}

export function createUnsubscribeKey(jwtSecret: string): UnsubscribeKey {
  return { key: Buffer.from(hkdfSync('sha256', jwtSecret, 'tenantry', 'digest-unsubscribe', 32)) };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function mac(key: UnsubscribeKey, userId: string): string {
  return createHmac('sha256', key.key).update(`unsubscribe-digest:${userId}`).digest('base64url');
}

export function unsubscribeToken(key: UnsubscribeKey, userId: string): string {
  return `${Buffer.from(userId).toString('base64url')}.${mac(key, userId)}`;
}

/** The user id the token was issued for, or null for anything forged or malformed. */
export function verifyUnsubscribeToken(key: UnsubscribeKey, token: string): string | null {
  const [encodedUser, signature, extra] = token.split('.');
  if (!encodedUser || !signature || extra !== undefined || token.length > 200) return null;
  const userId = Buffer.from(encodedUser, 'base64url').toString('utf8');
  if (!UUID.test(userId)) return null;
  return secretsEqual(signature, mac(key, userId)) ? userId : null;
}
