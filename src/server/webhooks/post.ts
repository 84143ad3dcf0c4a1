// In charge of one webhook HTTP attempt: a POST with a timeout, never following redirects, through
// the destination guard, reading at most a small excerpt of the answer; and the kept-alive
// connections attempts share.
import http from 'node:http';
import https from 'node:https';
import { checkUrl, guardedLookup, hostOf, type DestinationPolicy } from './destination.js';

/** Kept-alive connections, per scheme, that attempts to the same host reuse. */
export interface WebhookAgents {
  http: http.Agent;
  https: https.Agent;
}

/**
 * An idle connection is closed after this long: below the 5 s a Node.js receiver keeps one open
 * by default, so we close first rather than send on a connection the receiver is closing.
 */
const IDLE_CONNECTION_MS = 4000;

/**
 * Connections for deliveries, at most `perHost` to one receiver at once. Reusing one is as safe
 * as opening it: the guarded lookup checked the address it connects to when it was opened, and a
 * kept connection stays with that address whatever the name resolves to later.
 */
export function createWebhookAgents(perHost: number): WebhookAgents {
  const options = {
    keepAlive: true,
    maxSockets: perHost,
    maxFreeSockets: perHost,
    timeout: IDLE_CONNECTION_MS,
    scheduling: 'lifo' as const,
  };
  return { http: new http.Agent(options), https: new https.Agent(options) };
}

export interface AttemptResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseExcerpt: string | null;
  ok: boolean;
}

const EXCERPT_BYTES = 1024;

/** Text a receiver sent, as the attempt log keeps it: PostgreSQL text cannot hold NUL. */
function storable(text: string): string {
  return text.replaceAll(String.fromCharCode(0), '');
}

export async function postWebhook(
  target: string,
  headers: Record<string, string>,
  body: string,
  policy: DestinationPolicy,
  timeoutMs: number,
  /** kept-alive connections to reuse; without them each attempt opens and closes its own */
  agents?: WebhookAgents,
): Promise<AttemptResult> {
  const started = performance.now();
  const done = (partial: Omit<AttemptResult, 'durationMs' | 'ok'>): AttemptResult => ({
    statusCode: partial.statusCode,
    error: partial.error === null ? null : storable(partial.error),
    responseExcerpt: partial.responseExcerpt === null ? null : storable(partial.responseExcerpt),
    durationMs: Math.round(performance.now() - started),
    ok: partial.statusCode !== null && partial.statusCode >= 200 && partial.statusCode < 300,
  });
  let url: URL;
  try {
    url = new URL(target);
    checkUrl(url, policy);
  } catch (error) {
    return done({ statusCode: null, error: (error as Error).message, responseExcerpt: null });
  }
  const secure = url.protocol === 'https:';
  const pooled = agents ? (secure ? agents.https : agents.http) : false;
  const first = await send(url, headers, body, policy, timeoutMs, pooled);
  // A kept connection the receiver closed while it sat idle fails as soon as it is written to;
  // that is no answer from the receiver, so the attempt is made again on a new connection.
  const result =
    first.staleConnection && pooled ? await send(url, headers, body, policy, timeoutMs, false) : first;
  return done(result);
}

interface Sent {
  statusCode: number | null;
  error: string | null;
  responseExcerpt: string | null;
  /** the request failed on a reused connection before any answer (reset or closed by the peer) */
  staleConnection: boolean;
}

function send(
  url: URL,
  headers: Record<string, string>,
  body: string,
  policy: DestinationPolicy,
  timeoutMs: number,
  agent: http.Agent | false,
): Promise<Sent> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<Sent>((resolve) => {
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body).toString(),
          'user-agent': 'Tenantry-Webhooks/1',
        },
        lookup: guardedLookup(policy, hostOf(url)) as never,
        timeout: timeoutMs,
        agent,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          // Only an excerpt is kept; the rest of a large answer is read and dropped.
          if (size < EXCERPT_BYTES) chunks.push(chunk);
          size += chunk.length;
        });
        response.on('end', () =>
          resolve({
            statusCode: response.statusCode ?? null,
            // A redirect is an answer, not a place to go: it is logged and counts as a failure.
            error:
              response.statusCode && response.statusCode >= 300 && response.statusCode < 400
                ? `redirect to ${response.headers.location ?? '(no location)'} not followed`
                : null,
            responseExcerpt: Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8'),
            staleConnection: false,
          }),
        );
        response.on('error', (error) =>
          resolve({
            statusCode: response.statusCode ?? null,
            error: error.message,
            responseExcerpt: null,
            staleConnection: false,
          }),
        );
      },
    );
    const overall = setTimeout(
      () => request.destroy(new Error(`timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    request.on('timeout', () => request.destroy(new Error(`timed out after ${timeoutMs} ms`)));
    request.on('error', (error: NodeJS.ErrnoException) =>
      resolve({
        statusCode: null,
        error: error.message,
        responseExcerpt: null,
        staleConnection: request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE'),
      }),
    );
    request.on('close', () => clearTimeout(overall));
    request.end(body);
  });
}
