// In charge of POST /api/billing/webhook: reads the raw body (1 MB cap), verifies it, and hands
// the event to the event log, answering a plain reply that the server's listener writes on
// node:http directly (a thin Hono route serves in-process requests). Errors are small JSON bodies.
import { Hono } from 'hono';
import { HttpError, isHttpError } from '../http/errors.js';
import { apiInputOf, toResponse, type ApiInput, type Reply } from '../http/reply.js';
import { databaseUnavailable, isDatabaseUnavailable } from '../http/unavailable.js';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';
import { receiveEvent, type HandlerRegistry } from './events.js';
import { verifyWebhook } from './verify.js';

export interface BillingRouteDeps {
  pool: Pool;
  logger: Logger;
  webhookSecret: string;
  handlers: HandlerRegistry;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

function json(status: number, body: unknown, headers: Record<string, string> = {}): Reply {
  return { status, headers: { ...JSON_HEADERS, ...headers }, body: JSON.stringify(body) };
}

/** The webhook: POST only; every outcome, refusal and failure answered as a small JSON body. */
export function createWebhookHandler(
  deps: BillingRouteDeps,
): (input: Pick<ApiInput, 'method' | 'headers' | 'body'>) => Promise<Reply> {
  return async (input) => {
    try {
      if (input.method !== 'POST') throw new HttpError(405, 'Use POST', { code: 'method_not_allowed' });
      const raw = await input.body();
      const { event, payload } = verifyWebhook(
        raw,
        input.headers.get('stripe-signature'),
        deps.webhookSecret,
      );
      const outcome = await receiveEvent(deps.pool, deps.handlers, deps.logger, event, { payload });
      return json(200, { received: true, id: event.id, outcome });
    } catch (error) {
      const known = isHttpError(error)
        ? error
        : isDatabaseUnavailable(error)
          ? databaseUnavailable(error)
          : null;
      if (known) return json(known.status, { error: known.code, message: known.message }, known.headers);
      deps.logger.error({ err: error }, 'billing webhook failed');
      return json(500, { error: 'internal_error', message: 'Internal server error' });
    }
  };
}

/** The Hono route for in-process requests; the server's listener serves the webhook on node:http. */
export function billingRoutes(handle: ReturnType<typeof createWebhookHandler>): Hono {
  const app = new Hono();
  app.all('/webhook', async (c) => {
    return toResponse(await handle(apiInputOf(c.req.raw)));
  });
  return app;
}
