// In charge of watching bytes as they stream into a backend: counting them against the caller's
// limit (refusing the object the moment it is exceeded, not after it is stored) and hashing them
// for the object's etag.
import { createHash, type Hash } from 'node:crypto';
import { Transform, finished, type TransformCallback } from 'node:stream';
import { ObjectTooLarge } from './types.js';

/**
 * Passes bytes through, counting and hashing them; fails with ObjectTooLarge past maxBytes.
 * SHA-256, not MD5: an etag only has to change with the content, and with the processor's SHA
 * instructions SHA-256 runs at 1.8 GB/s on the machine we measure on where MD5 runs at 0.77 GB/s,
 * which halved the throughput of writes to disk (the hash runs on the event loop).
 */
export class CountingStream extends Transform {
  bytes = 0;
  /** called with the running count after each chunk passed */
  onProgress: ((bytes: number) => void) | undefined;
  private readonly hash: Hash = createHash('sha256');

  constructor(private readonly maxBytes: number | undefined) {
    super();
  }

  override _transform(chunk: Buffer | string, _encoding: BufferEncoding, callback: TransformCallback) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.bytes += buffer.length;
    if (this.maxBytes !== undefined && this.bytes > this.maxBytes) {
      callback(new ObjectTooLarge(`object exceeds the maximum size of ${this.maxBytes} bytes`));
      return;
    }
    this.hash.update(buffer);
    this.onProgress?.(this.bytes);
    callback(null, buffer);
  }

  /** The etag of everything that passed: the first 128 bits of its SHA-256, as 32 hex digits; call once, at the end. */
  etag(): string {
    return this.hash.digest('hex').slice(0, 32);
  }
}

/**
 * Feeds body into a new CountingStream and returns it. The body is piped, not handed to
 * stream.pipeline: a backend's own failure (too large, disk full) unpipes the body and leaves it
 * undestroyed, so an HTTP handler can still answer on the request's connection. A body that errors
 * or closes before its end fails the counter, so nothing downstream mistakes it for a whole object.
 */
export function countBody(body: NodeJS.ReadableStream, maxBytes: number | undefined): CountingStream {
  if (maxBytes !== undefined && (!Number.isSafeInteger(maxBytes) || maxBytes < 0)) {
    throw new RangeError('maxBytes must be a non-negative integer');
  }
  const counter = new CountingStream(maxBytes);
  // The watch outlives the counter: a body that fails after the backend gave up on it (unpiped)
  // still has a listener, so its error can never go unhandled and bring the process down.
  finished(body, { writable: false }, (error) => {
    if (error) counter.destroy(error);
  });
  counter.once('close', () => body.unpipe(counter));
  // Its failure reaches the backend through whatever reads it (pipeline, the S3 upload); until
  // that reader is attached (a backend may still be opening a file) the error must not go unheard.
  counter.on('error', () => undefined);
  body.pipe(counter);
  return counter;
}
