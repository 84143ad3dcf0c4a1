// In charge of naming the client's address for per-address limits. Forwarded headers are only
// believed when TRUST_PROXY says a proxy we run sets them; otherwise anyone could forge them.
import type { IncomingMessage } from 'node:http';

export function clientAddress(
  headers: Headers,
  incoming: IncomingMessage | undefined,
  trustProxy: boolean,
): string | null {
  if (trustProxy) {
    const forwarded = headers.get('x-forwarded-for')?.split(',')[0]?.trim();
    if (forwarded) return stripIpv4Mapping(forwarded);
  }
  const remote = incoming?.socket?.remoteAddress;
  return remote ? stripIpv4Mapping(remote) : null;
}

function stripIpv4Mapping(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
