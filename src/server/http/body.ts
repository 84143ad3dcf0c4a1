// In charge of reading request bodies safely: a hard size cap (413) enforced while streaming,
// and JSON that must parse (400) before any handler sees it.
import type { IncomingMessage } from 'node:http';
import { HttpError } from './errors.js';

export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads the raw body as bytes, refusing anything over `limit` without buffering it all. */
export async function readBodyBytes(request: Request, limit = MAX_BODY_BYTES): Promise<Uint8Array> {
  const declared = request.headers.get('content-length');
  if (declared !== null && Number(declared) > limit) throw payloadTooLarge(limit);
  if (declared !== null && /^\d+$/.test(declared)) {
    // A declared length within the limit: HTTP framing ends the body there, so it can be read in
    // one piece (the server adapter's direct read, without a web stream); checked again for
    // requests made in-process, whose header need not match their body.
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > limit) throw payloadTooLarge(limit);
    return bytes;
  }
  if (!request.body) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw payloadTooLarge(limit);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** Parses a JSON body. An empty body is `undefined`; malformed JSON is a 400 bad_json. */
export async function readJsonBody(request: Request, limit = MAX_BODY_BYTES): Promise<unknown> {
  return parseJsonBody(await readBodyBytes(request, limit));
}

/** A body's bytes as JSON: nothing (or only spaces) is `undefined`; malformed JSON is a 400 bad_json. */
export function parseJsonBody(bytes: Uint8Array): unknown {
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new HttpError(400, 'Could not parse request body as JSON', { code: 'bad_json' });
  }
}

function bodyIncomplete(): HttpError {
  return new HttpError(400, 'The request body ended early', { code: 'body_incomplete' });
}

function payloadTooLarge(limit: number): HttpError {
  return new HttpError(413, `Request body is larger than ${limit} bytes`, {
    code: 'request_too_large',
  });
}

/**
 * readBodyBytes for a request served on node:http directly: a declared length over `limit` is
 * refused unread, and a body that grows past it (chunked) stops being read there.
 */
export function readNodeBody(request: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Uint8Array> {
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(payloadTooLarge(limit));
  // A client gone before the body was asked for: no 'end', 'error' or 'close' is still to come.
  if (request.destroyed) return Promise.reject(bodyIncomplete());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer) => {
      total += chunk.byteLength;
      if (total > limit) {
        request.off('data', onData);
        request.pause();
        reject(payloadTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    let ended = false;
    request.on('data', onData);
    request.once('end', () => {
      ended = true;
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total));
    });
    // A client that goes away mid-body ends the request with an 'error' (aborted) or a 'close'
    // without an 'end': stop waiting for it, and say so as a client's mistake, not a failure.
    request.once('error', () => reject(bodyIncomplete()));
    request.once('close', () => {
      if (!ended) reject(bodyIncomplete());
    });
  });
}
