// In charge of naming the client's address for per-address limits. Forwarded headers are only
// believed when TRUST_PROXY says a proxy we run sets them; otherwise anyone could forge them. Even
// then only a well-formed IP address is taken: the address is stored as `inet` and keys limits.
import { isIP } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { HeaderReader } from './headers.js';

export function clientAddress(
  headers: HeaderReader,
  incoming: IncomingMessage | undefined,
  trustProxy: boolean,
): string | null {
  if (trustProxy) {
    const forwarded = ipAddress(headers.get('x-forwarded-for')?.split(',')[0]);
    if (forwarded) return forwarded;
  }
  return ipAddress(incoming?.socket?.remoteAddress);
}

/** `value` as a plain IP address (IPv4-mapped IPv6 unwrapped), or null when it is not one. */
export function ipAddress(value: string | null | undefined): string | null {
  const address = value?.trim();
  // Zone ids ("fe80::1%eth0") pass isIP but not PostgreSQL's inet.
  if (!address || address.length > 45 || address.includes('%') || !isIP(address)) return null;
  const unmapped = address.toLowerCase().startsWith('::ffff:') ? address.slice(7) : address;
  return isIP(unmapped) ? unmapped : address;
}
