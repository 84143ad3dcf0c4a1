// In charge of POST /api/billing/webhook: a thin adapter that reads the raw body (1 MB cap),
// verifies it, and hands the event to the event log. Errors are small JSON bodies.
import { Hono } from 'hono';
import { readBodyBytes } from '../http/body.js';
import { HttpError, isHttpError } from '../http/errors.js';
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

export function billingRoutes(deps: BillingRouteDeps): Hono {
  const app = new Hono();
  app.onError((error, c) => {
    const known = isHttpError(error)
      ? error
      : isDatabaseUnavailable(error)
        ? databaseUnavailable(error)
        : null;
    if (known)
      return c.json({ error: known.code, message: known.message }, known.status as 400, known.headers);
    deps.logger.error({ err: error }, 'billing webhook failed');
    return c.json({ error: 'internal_error', message: 'Internal server error' }, 500);
  });

  app.post('/webhook', async (c) => {
    const raw = await readBodyBytes(c.req.raw);
    const event = verifyWebhook(raw, c.req.header('stripe-signature') ?? null, deps.webhookSecret);
    const outcome = await receiveEvent(deps.pool, deps.handlers, deps.logger, event);
    return c.json({ received: true, id: event.id, outcome });
  });
  app.all('/webhook', () => {
    throw new HttpError(405, 'Use POST', { code: 'method_not_allowed' });
  });
  return app;
}
