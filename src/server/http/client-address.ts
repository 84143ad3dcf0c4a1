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

/**
 * What per-address shares count by: an IPv4 address itself, an IPv6 address's /64 network. One
 * IPv6 subscriber is handed a whole /64, so counting single IPv6 addresses would let one client
 * appear as billions.
 */
export function addressGroup(address: string | null): string | null {
  if (address === null || isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  const missing = 8 - headGroups.length - tailGroups.length;
  // Only the first four groups count, and an embedded IPv4 tail sits in the last two.
  const groups = address.includes('::')
    ? [...headGroups, ...Array<string>(Math.max(0, missing)).fill('0'), ...tailGroups]
    : headGroups;
  const network = groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16));
  return `${network.join(':')}::/64`;
}
