// In charge of serving an API straight on node:http, without web Request/Response objects: the
// request id, the headers every API response carries (security, CORS for browser apps), the
// access log line, and writing the answer. The data API and the payment webhook are served this
// way (decision 0029); platform.ts's middlewares set the same headers, from the same constants,
// on Hono's routes.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../logger.js';
import { readNodeBody } from './body.js';
import { nodeHeaders } from './headers.js';
import type { ApiInput, Reply } from './reply.js';

/** Response headers browser code may read on the client-facing APIs. */
export const CORS_EXPOSED_HEADERS = [
  'content-range',
  'x-total-count',
  'link',
  'preference-applied',
  'x-request-id',
  'retry-after',
];

/**
 * The security headers of every platform answer: Hono's secureHeaders defaults without
 * Cross-Origin-Resource- and -Opener-Policy, so browser apps on other origins can read API answers.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Origin-Agent-Cluster': '?1',
  'Referrer-Policy': 'no-referrer',
  'Strict-Transport-Security': 'max-age=15552000; includeSubDomains',
  'X-Content-Type-Options': 'nosniff',
  'X-DNS-Prefetch-Control': 'off',
  'X-Download-Options': 'noopen',
  'X-Frame-Options': 'SAMEORIGIN',
  'X-Permitted-Cross-Domain-Policies': 'none',
  'X-XSS-Protection': '0',
};

/** The caller's request id when it is short and plain (as hono/request-id checks it), otherwise a new one. */
export function requestIdFrom(value: string | null | undefined): string {
  return !value || value.length > 128 || /[^\w\-=]/.test(value) ? randomUUID() : value;
}

const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': CORS_EXPOSED_HEADERS.join(','),
};

/** A node:http request listener answering every request with `handle`; `cors` for the client-facing APIs. */
export function serveOnNode(
  handle: (input: ApiInput) => Promise<Reply>,
  logger: Logger,
  options: { cors: boolean } = { cors: true },
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    const started = performance.now();
    const raw = req.headers['x-request-id'];
    const requestId = requestIdFrom(Array.isArray(raw) ? raw[0] : raw);
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    let answer: Reply;
    try {
      answer = await handle({
        method,
        url,
        headers: nodeHeaders(req.headers),
        body: () => readNodeBody(req),
        incoming: req,
      });
    } catch (error) {
      // The handler renders its own errors; this is a bug's last line, answered as platform.ts does.
      logger.error({ err: error, path: url.split('?')[0] }, 'request failed');
      answer = {
        status: 500,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ error: 'internal_error', message: 'Internal server error' }),
      };
    }
    const headers: Record<string, string | number> = {
      ...answer.headers,
      ...API_SECURITY_HEADERS,
      'X-Request-Id': requestId,
      ...(options.cors ? CORS_HEADERS : {}),
    };
    if (answer.body !== null) headers['Content-Length'] = Buffer.byteLength(answer.body);
    // A body refused for its size was not read to its end: close rather than read the rest.
    if (answer.status === 413) res.shouldKeepAlive = false;
    res.writeHead(answer.status, headers);
    res.end(answer.body ?? undefined);
    logger.info(
      {
        requestId,
        method,
        path: url.split('?')[0],
        status: answer.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      },
      'request',
    );
  };
}
