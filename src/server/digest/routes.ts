// In charge of the digest trigger, {base_url}/api/notifications/digest?frequency=daily|weekly:
// the scheduler's bearer secret is checked in constant time first (401), then the frequency
// (400), then the digest run. GET is accepted as well as POST, because some hosted schedulers
// (Vercel Cron) can only send GET; both need the same secret.
import { Hono, type Context } from 'hono';
import { HttpError, isHttpError } from '../http/errors.js';
import { databaseUnavailable, isDatabaseUnavailable } from '../http/unavailable.js';
import { secretsEqual } from '../identity/secrets.js';
import type { Logger } from '../logger.js';
import { FREQUENCIES, type Frequency } from './frequency.js';
import { verifyUnsubscribeToken, type UnsubscribeKey } from './unsubscribe-token.js';

export interface DigestRouteDeps {
  cronSecret: string;
  logger: Logger;
  unsubscribeKey: UnsubscribeKey;
  runDigest(frequency: Frequency): Promise<{ sent: number }>;
  /** turns the user's digest off; false when the user no longer exists */
  unsubscribe(userId: string): Promise<boolean>;
}

function page(title: string, body: string, status = 200): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head><body style="font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem"><h1>${title}</h1>${body}</body></html>`;
  return new Response(html, { status, headers: { 'content-type': 'text/html; charset=utf-8' } });
}

function bearer(header: string | undefined): string | null {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match ? match[1]! : null;
}

export function digestRoutes(deps: DigestRouteDeps): Hono {
  const app = new Hono();
  app.onError((error, c) => {
    const known = isHttpError(error)
      ? error
      : isDatabaseUnavailable(error)
        ? databaseUnavailable(error)
        : null;
    if (known)
      return c.json(
        { ok: false, error: known.code, message: known.message },
        known.status as 400,
        known.headers,
      );
    deps.logger.error({ err: error }, 'digest trigger failed');
    return c.json({ ok: false, error: 'internal_error', message: 'Internal server error' }, 500);
  });

  const trigger = async (c: Context) => {
    const secret = bearer(c.req.header('authorization'));
    if (secret === null || !secretsEqual(secret, deps.cronSecret)) {
      throw new HttpError(401, 'Missing or invalid cron secret', {
        code: 'unauthorized',
        headers: { 'WWW-Authenticate': 'Bearer' },
      });
    }
    const frequency = c.req.query('frequency');
    if (!FREQUENCIES.includes(frequency as Frequency)) {
      throw new HttpError(400, 'frequency must be daily or weekly', { code: 'invalid_frequency' });
    }
    const { sent } = await deps.runDigest(frequency as Frequency);
    return c.json({ ok: true, frequency, sent });
  };
  app.post('/digest', trigger);
  app.get('/digest', trigger);

  // One-click unsubscribe (RFC 8058): mail clients POST to the List-Unsubscribe URL. A person
  // following the link (GET) gets a confirmation button, so link scanners cannot unsubscribe anyone.
  app.get('/unsubscribe', (c) => {
    const token = c.req.query('token') ?? '';
    if (!verifyUnsubscribeToken(deps.unsubscribeKey, token)) {
      return page(
        'Link not valid',
        '<p>This unsubscribe link is not valid. Change your e-mail preferences in the app.</p>',
        400,
      );
    }
    return page(
      'Stop digest e-mails?',
      `<form method="post"><input type="hidden" name="token" value="${token.replace(/[^A-Za-z0-9_.-]/g, '')}"><button type="submit">Unsubscribe</button></form>`,
    );
  });
  app.post('/unsubscribe', async (c) => {
    const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
    const token = c.req.query('token') ?? (typeof form.token === 'string' ? form.token : '');
    const userId = verifyUnsubscribeToken(deps.unsubscribeKey, token);
    if (!userId) return page('Link not valid', '<p>This unsubscribe link is not valid.</p>', 400);
    await deps.unsubscribe(userId);
    return page(
      'Unsubscribed',
      '<p>You will get no more digest e-mails. You can turn them back on in your notification settings.</p>',
    );
  });
  return app;
}
