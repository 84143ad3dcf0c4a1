// In charge of recognising "the database is unreachable right now" (refused connections, pool
// timeouts, server shutting down) so every API answers 503 quickly instead of 500 or hanging.
import { HttpError } from './errors.js';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
]);

export function isDatabaseUnavailable(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown; syscall?: unknown } | null;
  if (!e || typeof e !== 'object') return false;
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  return (
    NETWORK_CODES.has(code) ||
    // A Unix socket's file is gone while its server is down (a missing file elsewhere is not this).
    (code === 'ENOENT' && e.syscall === 'connect') ||
    code.startsWith('08') || // connection exceptions
    code === '57P01' || // admin shutdown
    code === '57P02' ||
    code === '57P03' || // cannot connect now (starting up)
    /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/i.test(message)
  );
}

export function databaseUnavailable(cause: unknown): HttpError {
  return new HttpError(503, 'The database is unavailable; try again shortly', {
    code: 'database_unavailable',
    headers: { 'Retry-After': '5' },
    cause,
  });
}
