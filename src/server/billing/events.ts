// In charge of applying webhook events exactly once: the event is recorded in the event log and
// acted on in ONE transaction, so a duplicate delivery (even a concurrent one) waits on the log's
// key and then finds the work done. A failing handler rolls back, is recorded as failed, and
// answers 5xx so the provider retries; a later delivery or a replay picks it up again. An event a
// handler refuses (it names a workspace it may not touch) also rolls back and is recorded as
// failed, with the reason, but is acknowledged: retrying it would be refused the same way.
import type { Pool } from '../db/pool.js';
import { withServiceFolded, type Statement, type Tx } from '../db/transactions.js';
import { HttpError } from '../http/errors.js';
import { databaseUnavailable, isDatabaseUnavailable } from '../http/unavailable.js';
import type { Logger } from '../logger.js';
import type { VerifiedEvent } from './verify.js';

export type HandlerOutcome = 'processed' | 'ignored';

/**
 * A handler's last statement, sent with the commit instead of before it: one round trip fewer
 * per event. It must raise to refuse (REFUSAL_SQLSTATE, or any other error to fail), since the
 * commit follows it unread, and write any outcome but 'processed' itself.
 */
export interface FinalStatement {
  statement: Statement;
  outcome: (rows: Record<string, unknown>[]) => HandlerOutcome;
}

export type EventHandler = (tx: Tx, event: VerifiedEvent) => Promise<HandlerOutcome | FinalStatement>;
/** One handler per event type; adding a type is adding an entry. */
export type HandlerRegistry = Readonly<Record<string, EventHandler>>;

export type ReceiveOutcome = HandlerOutcome | 'duplicate' | 'refused';

/** Thrown by a handler for an event it will not apply; the message says why (kept in the log). */
export class RefusedEvent extends Error {
  override name = 'RefusedEvent';
}

/** What a final statement raises to refuse an event (internal.billing_require_target). */
export const REFUSAL_SQLSTATE = 'TB001';

const isRefusal = (error: unknown) =>
  error instanceof RefusedEvent || (error as { code?: unknown } | null)?.code === REFUSAL_SQLSTATE;

/**
 * The exactly-once claim: a row for a new event (or a failed one to retry), nothing for a
 * duplicate. The row is written with the usual outcome, 'processed': no other transaction sees it
 * before the commit, which also makes the handler's effects visible; a rollback takes it back
 * (or leaves the failed row as it was), and any other outcome is written over it before the
 * commit. That saves a second write of the row for almost every event. (processed_at is now(),
 * the transaction's start, whichever statement writes it.)
 */
function claim(event: VerifiedEvent, payload: string, force: boolean): Statement {
  return {
    text: `insert into internal.billing_events (id, type, created, payload, status, processed_at)
     values ($1, $2, $3, $4, 'processed', now())
     on conflict (id) do update set status = 'processed', processed_at = now(), last_error = null,
       attempts = internal.billing_events.attempts + 1
       where internal.billing_events.status = 'failed' or $5
     returning id`,
    values: [event.id, event.type, event.created, payload, force],
  };
}

export async function receiveEvent(
  pool: Pool,
  handlers: HandlerRegistry,
  logger: Logger,
  event: VerifiedEvent,
  options: { force?: boolean; payload?: string } = {},
): Promise<ReceiveOutcome> {
  // The provider's own text when it came over the wire (every field it sent, no second
  // serialisation); a replayed event is its stored record.
  const payload = options.payload ?? JSON.stringify(event);
  try {
    // The claim rides with the begin, and the handler's final statement (or any other status than
    // the claim's) with the commit: one message each.
    return await withServiceFolded<ReceiveOutcome>(
      pool,
      claim(event, payload, options.force ?? false),
      async (tx, claimed) => {
        if (claimed.length === 0) return { value: 'duplicate' as const };
        const handler = handlers[event.type];
        const outcome = handler ? await handler(tx, event) : 'ignored';
        if (typeof outcome === 'object') return { last: outcome.statement, valueFrom: outcome.outcome };
        if (!handler)
          logger.info({ eventId: event.id, type: event.type }, 'billing event type not handled; recorded');
        if (outcome === 'processed') return { value: outcome }; // as the claim wrote it
        return {
          value: outcome,
          last: {
            text: `update internal.billing_events set status = $2, processed_at = now(), last_error = null where id = $1`,
            values: [event.id, outcome],
          },
        };
      },
    );
  } catch (error) {
    if (isDatabaseUnavailable(error)) throw databaseUnavailable(error); // nothing to record; the provider retries
    const refused = isRefusal(error);
    if (refused)
      logger.warn(
        { eventId: event.id, type: event.type, reason: (error as Error).message },
        'billing event refused',
      );
    else logger.error({ err: error, eventId: event.id, type: event.type }, 'billing event handler failed');
    await pool
      .query(
        `insert into internal.billing_events (id, type, created, payload, status, last_error)
         values ($1, $2, $3, $4, 'failed', $5)
         on conflict (id) do update set status = 'failed', last_error = excluded.last_error`,
        [event.id, event.type, event.created, payload, String((error as Error).message).slice(0, 2000)],
      )
      .catch((logError: unknown) =>
        logger.error({ err: logError, eventId: event.id }, 'could not record failed event'),
      );
    if (refused) return 'refused';
    throw new HttpError(500, 'Event could not be processed; it will be retried', {
      code: 'handler_failed',
      cause: error,
    });
  }
}

/** Re-applies stored events in the order the provider created them (failed ones, or all with force). */
export async function replayEvents(
  pool: Pool,
  handlers: HandlerRegistry,
  logger: Logger,
  options: { all?: boolean; ids?: string[] } = {},
): Promise<{ replayed: number; failed: number }> {
  const rows = await pool.query<{ payload: VerifiedEvent }>(
    `select payload from internal.billing_events
     where ($1::text[] is null or id = any($1)) and ($2 or status = 'failed')
     order by created, id`,
    [options.ids ?? null, options.all ?? false],
  );
  let replayed = 0;
  let failed = 0;
  for (const { payload } of rows.rows) {
    try {
      await receiveEvent(pool, handlers, logger, payload, { force: true });
      replayed++;
    } catch {
      failed++;
    }
  }
  return { replayed, failed };
}
