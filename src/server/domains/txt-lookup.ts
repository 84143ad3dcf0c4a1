// In charge of looking up a workspace domain's verification record in DNS: the TXT records at
// `_tenantry.<domain>` and at the domain itself, through node:dns, against the resolvers the
// operator named in DOMAIN_VERIFICATION_DNS_SERVER (else the system's).
import { Resolver } from 'node:dns/promises';

/** found: the record is there; missing: the name answers without it; unknown: the lookup failed. */
export type TxtOutcome = 'found' | 'missing' | 'unknown';

/** The value a workspace publishes to prove it controls a domain. */
export function verificationValue(token: string): string {
  return `tenantry-verification=${token}`;
}

// Answers that mean "no such record", as opposed to a resolver that could not answer.
const ABSENT = new Set(['ENODATA', 'ENOTFOUND', 'NXDOMAIN']);

export interface TxtLookupOptions {
  /** resolver addresses (host or host:port); empty = the system's */
  servers?: string[];
  timeoutMs?: number;
}

export function createTxtLookup(options: TxtLookupOptions = {}) {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 3000, tries: 2 });
  if (options.servers && options.servers.length > 0) resolver.setServers(options.servers);

  /** The TXT strings at name (each record's chunks joined, as RFC 7208 reads them). */
  async function txt(name: string): Promise<string[] | 'missing' | 'unknown'> {
    try {
      const records = await resolver.resolveTxt(name);
      return records.map((chunks) => chunks.join(''));
    } catch (error) {
      return ABSENT.has((error as { code?: string }).code ?? '') ? 'missing' : 'unknown';
    }
  }

  /** Whether `tenantry-verification=<token>` is published for the domain. */
  return async function lookUp(domain: string, token: string): Promise<TxtOutcome> {
    const wanted = verificationValue(token);
    const answers = await Promise.all([txt(`_tenantry.${domain}`), txt(domain)]);
    if (answers.some((a) => Array.isArray(a) && a.some((value) => value.trim() === wanted))) return 'found';
    // Only when both names answered can the record be said to be gone.
    return answers.every((a) => a !== 'unknown') ? 'missing' : 'unknown';
  };
}

export type TxtLookup = ReturnType<typeof createTxtLookup>;
