// In charge of realtime's HTTP endpoints: broadcasting without a socket, as realtime-js does when a
// channel is not joined (POST /realtime/v1/api/broadcast, a batch) and with httpSend (POST
// /realtime/v1/api/broadcast/:topic/events/:event, one message, JSON or bytes). The caller is
// decided as for every API (apikey header, optional bearer); a private message goes out only if
// the caller's policies let them send on its topic (otherwise it is dropped and the answer is
// still 202, as on Supabase). Bad input is refused whole: nothing of a refused batch is sent.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RealtimeConfig } from '../config.js';
import type { Pool } from '../db/pool.js';
import { isHttpError } from '../http/errors.js';
import { nodeHeaders } from '../http/headers.js';
import { MAX_BODY_BYTES, readNodeBody } from '../http/body.js';
import { API_SECURITY_HEADERS } from '../http/node-api.js';
import type { TokenSigner } from '../identity/access-tokens.js';
import { resolveCaller, type Caller, type ProjectKeys } from '../identity/caller.js';
import type { Logger } from '../logger.js';
import { permissionsFor } from './authorization.js';
import type { Broadcast } from './broadcast.js';
import { isRecord, type BroadcastBody } from './protocol.js';
import { topicKey } from './topics.js';

export const REALTIME_API_PATH = '/realtime/v1/api';
/** Messages in one batch. */
const MAX_BATCH = 100;

export interface RestDeps {
  pool: Pool;
  keys: ProjectKeys;
  signer: TokenSigner;
  limits: RealtimeConfig;
  /** delivers a broadcast to the topic's channels, here and on the other instances */
  publish: (key: string, broadcast: Broadcast, from: null) => void;
  logger: Logger;
}

interface Outgoing {
  topic: string;
  event: string;
  private: boolean;
  body: BroadcastBody;
}

function send(res: ServerResponse, status: number, body?: Record<string, unknown>): void {
  const headers: Record<string, string> = {
    ...API_SECURITY_HEADERS,
    'access-control-allow-origin': '*',
  };
  if (body) headers['content-type'] = 'application/json';
  res.writeHead(status, headers);
  res.end(body ? JSON.stringify(body) : undefined);
}

class Refusal extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function validName(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new Refusal(422, `${what} is required`);
  if (Buffer.byteLength(value) > 255 - 'realtime:'.length) throw new Refusal(422, `${what} is too long`);
  return value;
}

function jsonSize(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '');
}

/** The batch body: {messages: [{topic, event, payload, private?}]}. */
function batchOf(body: unknown, maxPayloadBytes: number): Outgoing[] {
  if (!isRecord(body) || !Array.isArray(body.messages)) {
    throw new Refusal(422, 'the body must be {"messages": [{"topic", "event", "payload", "private"}]}');
  }
  if (body.messages.length > MAX_BATCH) throw new Refusal(422, `at most ${MAX_BATCH} messages per request`);
  return body.messages.map((item: unknown, index) => {
    if (!isRecord(item)) throw new Refusal(422, `messages[${index}] must be an object`);
    const topic = validName(item.topic, `messages[${index}].topic`);
    const event = validName(item.event, `messages[${index}].event`);
    const payload = item.payload ?? {};
    if (!isRecord(payload)) throw new Refusal(422, `messages[${index}].payload must be an object`);
    if (jsonSize(payload) > maxPayloadBytes)
      throw new Refusal(413, `messages[${index}].payload is too large`);
    if (item.private !== undefined && typeof item.private !== 'boolean') {
      throw new Refusal(422, `messages[${index}].private must be true or false`);
    }
    return { topic, event, private: item.private === true, body: { kind: 'json', value: payload } };
  });
}

export function createRestHandler(deps: RestDeps) {
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const rest = url.pathname.slice(REALTIME_API_PATH.length);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': 'apikey, authorization, content-type, x-client-info',
        'access-control-max-age': '86400',
      });
      res.end();
      return;
    }
    const single = /^\/broadcast\/([^/]+)\/events\/([^/]+)$/.exec(rest);
    if (rest !== '/broadcast' && !single)
      return send(res, 404, { error: 'not_found', message: 'No such endpoint' });
    if (req.method !== 'POST') return send(res, 405, { error: 'method_not_allowed', message: 'Use POST' });
    let caller: Caller;
    try {
      caller = await resolveCaller(nodeHeaders(req.headers), deps.keys, deps.signer);
    } catch (error) {
      const status = isHttpError(error) ? error.status : 401;
      return send(res, status, { error: 'unauthorized', message: (error as Error).message });
    }
    let messages: Outgoing[];
    try {
      // A batch's body holds several payloads (each bounded below) in an envelope: it may be as
      // large as one request body elsewhere, or one largest payload and its envelope.
      const limit = single
        ? deps.limits.maxPayloadBytes
        : Math.max(deps.limits.maxPayloadBytes, MAX_BODY_BYTES) + 64 * 1024;
      const bytes = Buffer.from(await readNodeBody(req, limit));
      messages = single
        ? [singleOf(single, url, req, bytes)]
        : batchOf(parseJson(bytes), deps.limits.maxPayloadBytes);
    } catch (error) {
      if (error instanceof Refusal)
        return send(res, error.status, { error: 'invalid_request', message: error.message });
      if (isHttpError(error)) return send(res, error.status, { error: error.code, message: error.message });
      throw error;
    }
    // Permissions are asked once per private topic of the request.
    const allowed = new Map<string, boolean>();
    for (const message of messages) {
      if (message.private && !allowed.has(message.topic)) {
        let may = false;
        try {
          may = (await permissionsFor(deps.pool, caller, message.topic)).writeBroadcast;
        } catch (error) {
          if ((error as { code?: unknown }).code !== 'PGRST') throw error;
        }
        allowed.set(message.topic, may);
      }
    }
    for (const message of messages) {
      if (message.private && !allowed.get(message.topic)) continue;
      const topic = `realtime:${message.topic}`;
      deps.publish(topicKey(message.private, topic), { ...message, topic }, null);
    }
    send(res, 202);
  }

  return (req: IncomingMessage, res: ServerResponse): Promise<void> =>
    handle(req, res).catch((error: unknown) => {
      deps.logger.error({ err: error, path: req.url }, 'realtime: broadcast request failed');
      if (!res.headersSent) send(res, 500, { error: 'internal_error', message: 'Internal server error' });
      else res.destroy();
    });
}

function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch {
    throw new Refusal(400, 'the body is not JSON');
  }
}

function decodeSegment(segment: string, what: string): string {
  try {
    return validName(decodeURIComponent(segment), what);
  } catch (error) {
    if (error instanceof Refusal) throw error;
    throw new Refusal(400, `${what} is not a valid URL segment`);
  }
}

/** One message: the topic and event in the path, the payload the body (JSON, or bytes). */
function singleOf(match: RegExpExecArray, url: URL, req: IncomingMessage, bytes: Buffer): Outgoing {
  const topic = decodeSegment(match[1]!, 'topic');
  const event = decodeSegment(match[2]!, 'event');
  const privateParam = url.searchParams.get('private');
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  let body: BroadcastBody;
  if (type === 'application/octet-stream') body = { kind: 'binary', bytes };
  else if (type === 'application/json' || type === '') body = { kind: 'json', value: parseJson(bytes) };
  else throw new Refusal(415, 'send application/json or application/octet-stream');
  return { topic, event, private: privateParam === 'true', body };
}
