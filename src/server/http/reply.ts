// In charge of what an API handler receives and answers when no server framework stands between
// it and node:http: the request as method, URL, headers and a body reader, and a Reply (status,
// headers, text body or none). node-api.ts writes a Reply on node:http; toResponse wraps it for
// Hono's routes.
import type { IncomingMessage } from 'node:http';
import { readBodyBytes } from './body.js';
import type { HeaderReader } from './headers.js';

export interface ApiInput {
  method: string;
  /** the path and query string as received */
  url: string;
  headers: HeaderReader;
  /** the body's bytes, read at most once and within the body cap (413 beyond it) */
  body: () => Promise<Uint8Array>;
  /** the connection it came on (for the client address), when there is one */
  incoming: IncomingMessage | undefined;
}

export interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

export function reply(body: string | null, status: number, headers: Record<string, string>): Reply {
  return { status, headers, body };
}

/** A web Request (a Hono route's, in-process) as the ApiInput the node:http handlers take. */
export function apiInputOf(request: Request, incoming?: IncomingMessage): ApiInput {
  const url = new URL(request.url);
  return {
    method: request.method,
    url: url.pathname + url.search,
    headers: request.headers,
    body: () => readBodyBytes(request),
    incoming,
  };
}

export function toResponse(answer: Reply): Response {
  return new Response(answer.body, { status: answer.status, headers: answer.headers });
}
