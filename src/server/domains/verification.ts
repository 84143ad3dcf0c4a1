// In charge of verifying workspace domains by DNS (decision 0095): "Check now" for one domain
// and the scheduler's periodic pass over every domain not proven by an owner's address. The
// database decides what a finding means (internal.record_domain_dns_check); this module only
// looks the record up, since SQL cannot.
import type { Queryable } from '../db/pool.js';
import type { ScheduledJob } from '../scheduler.js';
import type { TxtLookup } from './txt-lookup.js';

export interface DomainCheck {
  id: string;
  domain: string;
  verified: boolean;
  verified_by: 'owner_email' | 'dns' | null;
  held_elsewhere: boolean;
  /** what the lookup saw */
  outcome: 'found' | 'missing' | 'unknown';
}

/** Looks the domain's record up and reports it to the database; requestedBy names who asked. */
export async function checkDomain(
  db: Queryable,
  lookUp: TxtLookup,
  domain: { id: string; domain: string; token: string },
  requestedBy: string | null = null,
): Promise<DomainCheck> {
  const outcome = await lookUp(domain.domain, domain.token);
  const found = outcome === 'unknown' ? null : outcome === 'found';
  const r = await db.query<{ facts: Omit<DomainCheck, 'outcome'> }>(
    'select internal.record_domain_dns_check($1, $2, $3) as facts',
    [domain.id, found, requestedBy],
  );
  return { ...r.rows[0]!.facts, outcome };
}

/** One pass of the periodic re-check: up to `batch` domains, the longest unchecked first. */
export async function recheckDomains(db: Queryable, lookUp: TxtLookup, batch = 100) {
  const due = await db.query<{ id: string; domain: string; token: string }>(
    'select id, domain, token from internal.domains_due_for_dns_check($1)',
    [batch],
  );
  const tally = { checked: 0, verified: 0, unverified: 0 };
  for (const row of due.rows) {
    const result = await checkDomain(db, lookUp, row);
    tally.checked++;
    if (result.verified) tally.verified++;
    else tally.unverified++;
  }
  return tally;
}

/** The scheduler's job: every 15 minutes, off the quarter hours the other jobs use. */
export function domainRecheckJob(db: Queryable, lookUp: TxtLookup): ScheduledJob {
  return { name: 'domains:recheck', cron: '7,22,37,52 * * * *', run: () => recheckDomains(db, lookUp) };
}
