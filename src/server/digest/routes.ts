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

export interface DigestRouteDeps {
  cronSecret: string;
  logger: Logger;
  runDigest(frequency: Frequency): Promise<{ sent: number }>;
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
  return app;
}
