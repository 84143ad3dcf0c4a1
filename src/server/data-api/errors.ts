// In charge of PostgREST's error contract: SQLSTATEs mapped to HTTP statuses, and every error
// rendered as {code, message, details, hint}. Unexpected failures are logged by the caller and
// answered with a generic body; internal messages never reach the client.
import { HttpError, isHttpError } from '../http/errors.js';
import { isDatabaseUnavailable } from '../http/unavailable.js';
import type { Reply } from '../http/reply.js';
import { responseTooLarge } from './limits.js';

interface PgError {
  code: string;
  message: string;
  detail?: string;
  hint?: string;
}

function isPgError(error: unknown): error is PgError {
  const e = error as { code?: unknown; severity?: unknown } | null;
  return !!e && typeof e.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) && typeof e.severity === 'string';
}

/** PostgREST's table (docs/references/errors.rst), for a pg error raised for `role`. */
export function statusForSqlState(code: string, role: string): number {
  if (/^PT\d{3}$/.test(code)) {
    const status = Number(code.slice(2));
    return status >= 100 && status <= 599 ? status : 500;
  }
  if (code === '23505' || code === '23503') return 409;
  if (code === '42501') return role === 'anon' ? 401 : 403;
  if (code === '42P01' || code === '42883') return 404;
  if (code === '25006') return 405;
  if (code === 'P0001') return 400;
  if (code.startsWith('08') || (code.startsWith('53') && code !== '53400') || code === '57P01') return 503;
  if (code.startsWith('28') || code.startsWith('0P')) return 403;
  if (code === '42P17' || code === '53400' || code === '21000') return 500;
  if (/^(40|54|55|57|58|XX|P0)/.test(code)) return 500;
  return 400;
}

/**
 * RAISE SQLSTATE 'PGRST' USING MESSAGE = '{"code","message","details","hint"}',
 * DETAIL = '{"status": n, "headers": {…}}': a function choosing its own response, as PostgREST
 * allows. Anything malformed there is the function's bug, so it becomes a logged 500.
 */
function customError(error: PgError): HttpError | null {
  try {
    const body = JSON.parse(error.message) as Record<string, unknown>;
    const meta = JSON.parse(error.detail ?? '') as { status?: unknown; headers?: unknown };
    const status = meta.status;
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599) return null;
    const headers: Record<string, string> = {};
    if (meta.headers && typeof meta.headers === 'object') {
      for (const [name, value] of Object.entries(meta.headers as Record<string, unknown>)) {
        if (typeof value === 'string' && /^[A-Za-z0-9-]{1,64}$/.test(name) && !/[\r\n]/.test(value)) {
          headers[name] = value;
        }
      }
    }
    const text = (v: unknown) => (typeof v === 'string' ? v : v == null ? null : JSON.stringify(v));
    return new HttpError(status, text(body.message) ?? '', {
      code: text(body.code) ?? 'PGRST',
      details: text(body.details),
      hint: text(body.hint),
      headers,
    });
  } catch {
    return null;
  }
}

/**
 * data_api.response_too_large stopped the statement (SQLSTATE TN413, migration 0039): its
 * embeds already added up to more than the body limit. The detail holds both figures; anything
 * else raising TN413 is mapped like any other SQLSTATE.
 */
function stoppedTooLarge(error: PgError): HttpError | null {
  try {
    const { bytes, max } = JSON.parse(error.detail ?? '') as { bytes?: unknown; max?: unknown };
    if (typeof bytes !== 'number' || typeof max !== 'number') return null;
    return responseTooLarge(bytes, max, { stoppedEarly: true });
  } catch {
    return null;
  }
}

export function toHttpError(error: unknown, role: string): HttpError | null {
  if (isHttpError(error)) return error;
  if (isPgError(error) && error.code === 'PGRST') return customError(error);
  const tooLarge = isPgError(error) && error.code === 'TN413' ? stoppedTooLarge(error) : null;
  if (tooLarge) return tooLarge;
  // Connection failures, and a server shutting down or starting up (57P01-57P03), are outages: 503.
  if (isDatabaseUnavailable(error)) {
    return new HttpError(503, 'The database is unavailable; try again shortly', {
      code: 'PGRST000',
      headers: { 'Retry-After': '5' },
    });
  }
  if (!isPgError(error)) return null;
  const status = statusForSqlState(error.code, role);
  if (status >= 500 && status !== 503) return null; // logged and answered generically
  const headers: Record<string, string> = status === 401 ? { 'WWW-Authenticate': 'Bearer' } : {};
  return new HttpError(status, error.message, {
    code: error.code,
    details: error.detail ?? null,
    hint: error.hint ?? null,
    headers,
  });
}

/** PostgreSQL cancelled the statement because it ran longer than the statement timeout. */
export function isStatementTimeout(error: unknown): boolean {
  return isPgError(error) && error.code === '57014';
}

/** PostgREST answers a cancelled statement with its SQLSTATE; we add which limit it met. */
export function statementTimedOut(): HttpError {
  return new HttpError(500, 'canceling statement due to statement timeout', {
    code: '57014',
    hint: 'The request ran longer than STATEMENT_TIMEOUT_MS allows; filter or page to do less work',
  });
}

/** The identity module reports token problems with its own codes; the data API speaks PGRST30x. */
export function fromAuthError(error: HttpError): HttpError {
  // A workspace API key past its allowance: a wait, not a credential problem.
  if (error.status === 429) return error;
  if (error.code === 'invalid_api_key') {
    return new HttpError(401, 'Invalid API key', {
      code: 'PGRST301',
      hint: 'Double check your apikey header',
    });
  }
  const expired = /expired/i.test(error.message);
  return new HttpError(401, expired ? 'JWT expired' : error.message, {
    code: expired ? 'PGRST303' : 'PGRST301',
    headers: {
      'WWW-Authenticate': `Bearer error="invalid_token", error_description="${expired ? 'JWT expired' : 'invalid JWT'}"`,
    },
  });
}

export function renderError(error: HttpError): Reply {
  return {
    status: error.status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'proxy-status': `PostgREST; error=${error.code}`,
      ...error.headers,
    },
    body: JSON.stringify({
      code: error.code,
      message: error.message,
      details: error.details,
      hint: error.hint,
    }),
  };
}
