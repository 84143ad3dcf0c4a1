// In charge of where a webhook may be sent: only http(s), and (unless the operator allows it) never
// to a loopback, private, link-local, CGNAT, multicast or unspecified address. The check runs on the
// address the socket actually connects to (a DNS lookup hook), so a name that resolves elsewhere at
// delivery than at registration (DNS rebinding) is still refused.
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';

export interface DestinationPolicy {
  allowPrivate: boolean;
  /** host names or literal addresses allowed although private */
  allowedHosts: string[];
}

// One list per family: a BlockList checks an IPv4 address against IPv6 rules as ::ffff:a.b.c.d,
// so the IPv6 rule refusing mapped addresses would otherwise refuse every IPv4 address.
const refused4 = new BlockList();
const refused6 = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  refused4.addSubnet(net, prefix, 'ipv4');
// IPv4 written as IPv6 (::a.b.c.d, ::ffff:a.b.c.d, NAT64) is refused whole: it is how a private
// IPv4 address slips past a check that only knows IPv4.
for (const [net, prefix] of [
  ['::', 96],
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const)
  refused6.addSubnet(net, prefix, 'ipv6');

/** Whether an IP address is one webhooks must not reach. */
export function isRefusedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  return family === 6 ? refused6.check(address, 'ipv6') : refused4.check(address, 'ipv4');
}

export class RefusedDestination extends Error {}

/** The host of a URL as the allowlist names it (no brackets around IPv6). */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
}

/** Throws RefusedDestination when the URL's scheme or literal address is not allowed. */
export function checkUrl(url: URL, policy: DestinationPolicy): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RefusedDestination(`only http and https destinations are allowed (got ${url.protocol})`);
  }
  if (policy.allowPrivate || policy.allowedHosts.includes(hostOf(url))) return;
  const host = hostOf(url);
  if (isIP(host) && isRefusedAddress(host)) {
    throw new RefusedDestination(
      `destination ${host} is a loopback, private, link-local or reserved address`,
    );
  }
}

/** A dns.lookup replacement for http.request that refuses forbidden resolved addresses. */
export function guardedLookup(policy: DestinationPolicy, host: string) {
  const exempt = policy.allowPrivate || policy.allowedHosts.includes(host.toLowerCase());
  return (
    hostname: string,
    options: LookupOptions,
    callback: (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '');
      const list = addresses as LookupAddress[];
      const bad = exempt ? undefined : list.find((a) => isRefusedAddress(a.address));
      if (bad) {
        return callback(
          new RefusedDestination(
            `destination ${hostname} resolves to ${bad.address}, a loopback, private, link-local or reserved address`,
          ),
          '',
        );
      }
      if (options.all) return callback(null, list);
      const first = list[0];
      if (!first) return callback(new RefusedDestination(`destination ${hostname} has no address`), '');
      callback(null, first.address, first.family);
    });
  };
}

/**
 * Resolves a URL's host now and refuses it when any of its addresses is forbidden: the database
 * cannot resolve names, so the web form asks this before registering (delivery checks again).
 */
export async function checkResolvedUrl(target: string, policy: DestinationPolicy): Promise<void> {
  const url = new URL(target);
  checkUrl(url, policy);
  const host = hostOf(url);
  if (isIP(host) || policy.allowPrivate || policy.allowedHosts.includes(host)) return;
  const lookup = guardedLookup(policy, host);
  await new Promise<void>((resolve, reject) =>
    lookup(host, { all: true }, (error) => {
      // A name that does not resolve yet is not refused here: it may be set up after registering.
      if (error instanceof RefusedDestination) reject(error);
      else resolve();
    }),
  );
}
