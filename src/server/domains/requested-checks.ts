// In charge of the DNS checks workspaces ask for through the API (public.request_domain_check,
// migration 0101): every few seconds each instance claims the asked checks (skipping those another
// instance claimed) and looks each record up as "Check now" does. SQL cannot resolve names, so
// this is how an integration on the data API gets a check without waiting for the 15-minute pass.
import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';
import type { TxtLookup } from './txt-lookup.js';
import { checkDomain } from './verification.js';

/** How often an instance looks for asked checks: an answer within seconds, one cheap query idle. */
const POLL_MS = 3000;
/** Checks claimed at once; the rest wait for the next round. */
const BATCH = 20;

export class RequestedDomainChecks {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;

  constructor(private readonly deps: { pool: Pool; lookUp: TxtLookup; logger: Logger }) {}

  /** Claims and looks up the asked checks of one round; returns how many were looked up. */
  async runOnce(): Promise<number> {
    const claimed = await this.deps.pool.query<{ id: string; domain: string; token: string }>(
      'select id, domain, token from internal.claim_requested_domain_checks($1)',
      [BATCH],
    );
    // Each check on its own: one failing (its claim removed meanwhile) stops none of the others.
    const outcomes = await Promise.allSettled(
      claimed.rows.map((row) => checkDomain(this.deps.pool, this.deps.lookUp, row)),
    );
    outcomes.forEach((outcome, i) => {
      if (outcome.status === 'rejected') {
        this.deps.logger.warn(
          { err: outcome.reason, domain: claimed.rows[i]!.domain },
          'requested domain check failed',
        );
      }
    });
    return claimed.rows.length;
  }

  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.runOnce()
        .catch((error: unknown) => this.deps.logger.error({ err: error }, 'requested domain checks failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, POLL_MS);
        });
    };
    this.timer = setTimeout(tick, POLL_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
