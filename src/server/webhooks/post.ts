// In charge of one webhook HTTP attempt: a POST with a timeout, never following redirects, through
// the destination guard, reading at most a small excerpt of the answer.
import http from 'node:http';
import https from 'node:https';
import { checkUrl, guardedLookup, hostOf, type DestinationPolicy } from './destination.js';

export interface AttemptResult {
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  responseExcerpt: string | null;
  ok: boolean;
}

const EXCERPT_BYTES = 1024;

export async function postWebhook(
  target: string,
  headers: Record<string, string>,
  body: string,
  policy: DestinationPolicy,
  timeoutMs: number,
): Promise<AttemptResult> {
  const started = performance.now();
  const done = (partial: Omit<AttemptResult, 'durationMs' | 'ok'>): AttemptResult => ({
    ...partial,
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
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<AttemptResult>((resolve) => {
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
        // One connection per attempt: a pooled socket would skip the address check.
        agent: false,
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
          resolve(
            done({
              statusCode: response.statusCode ?? null,
              // A redirect is an answer, not a place to go: it is logged and counts as a failure.
              error:
                response.statusCode && response.statusCode >= 300 && response.statusCode < 400
                  ? `redirect to ${response.headers.location ?? '(no location)'} not followed`
                  : null,
              responseExcerpt: Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8'),
            }),
          ),
        );
        response.on('error', (error) =>
          resolve(
            done({ statusCode: response.statusCode ?? null, error: error.message, responseExcerpt: null }),
          ),
        );
      },
    );
    const overall = setTimeout(
      () => request.destroy(new Error(`timed out after ${timeoutMs} ms`)),
      timeoutMs,
    );
    request.on('timeout', () => request.destroy(new Error(`timed out after ${timeoutMs} ms`)));
    request.on('error', (error) =>
      resolve(done({ statusCode: null, error: error.message, responseExcerpt: null })),
    );
    request.on('close', () => clearTimeout(overall));
    request.end(body);
  });
}
