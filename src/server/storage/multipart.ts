// In charge of reading a multipart/form-data upload as a stream: the one file part flows to its
// consumer as it arrives (with backpressure), never held whole in memory; the small text fields
// around it (cacheControl, contentType, metadata) are collected, within a size cap.
import { PassThrough, type Readable } from 'node:stream';
import { storageErrors } from './errors.js';

/** Bytes of headers a part may have, and of all text fields together. */
const MAX_PART_HEADER_BYTES = 8 * 1024;
const MAX_FIELD_BYTES = 64 * 1024;

export interface FilePart {
  contentType: string | null;
  stream: Readable;
}

export interface MultipartResult<T> {
  fields: Map<string, string>;
  /** what the file's consumer answered; undefined when there was no file part */
  file: T | undefined;
}

/** The boundary of a multipart/form-data content type, or null. */
export function multipartBoundary(contentType: string | null): string | null {
  if (!contentType || !/^multipart\/form-data\b/i.test(contentType)) return null;
  const match = /boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return match ? (match[1] ?? match[2] ?? null) : null;
}

interface PartHeaders {
  name: string | null;
  filename: string | null;
  contentType: string | null;
}

function parsePartHeaders(text: string): PartHeaders {
  const headers: PartHeaders = { name: null, filename: null, contentType: null };
  for (const line of text.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'content-disposition') {
      headers.name = /\bname="([^"]*)"/i.exec(value)?.[1] ?? null;
      headers.filename = /\bfilename="([^"]*)"/i.exec(value)?.[1] ?? null;
    } else if (key === 'content-type') {
      headers.contentType = value;
    }
  }
  return headers;
}

/**
 * Reads the body; the first part that carries a file (a filename, or the empty name storage-js
 * gives it) goes to onFile as a stream. Fields after the file are read once the file is stored.
 */
export async function readMultipart<T>(
  body: AsyncIterable<Buffer>,
  boundary: string,
  onFile: (part: FilePart, fieldsSoFar: ReadonlyMap<string, string>) => Promise<T>,
): Promise<MultipartResult<T>> {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const fields = new Map<string, string>();
  let fieldBytes = 0;
  let state: 'preamble' | 'after-delimiter' | 'headers' | 'field' | 'file' | 'done' = 'preamble';
  // The body starts with "--boundary": a leading CRLF makes the first delimiter like the others.
  let carry: Buffer = Buffer.from('\r\n');
  let field: { name: string; chunks: Buffer[] } | null = null;
  let file: { stream: PassThrough; result: Promise<T> } | null = null;
  let fileResult: T | undefined;
  let fileSeen = false;
  let failure: unknown = null;

  const writeFile = async (bytes: Buffer) => {
    if (!file || bytes.length === 0) return;
    if (failure) throw failure;
    if (!file.stream.write(bytes)) {
      await new Promise<void>((resolve, reject) => {
        const stream = file!.stream;
        const done = () => {
          stream.off('drain', done);
          stream.off('close', done);
          resolve();
        };
        stream.on('drain', done);
        stream.on('close', done);
        file!.result.catch(reject);
      });
    }
    if (failure) throw failure;
  };

  const addField = (bytes: Buffer) => {
    if (!field) return;
    fieldBytes += bytes.length;
    if (fieldBytes > MAX_FIELD_BYTES) throw storageErrors.invalidRequest('Form fields are too large');
    field.chunks.push(bytes);
  };

  try {
    for await (const chunk of body) {
      let buffer: Buffer = chunk;
      if (carry.length) {
        // Inside a part, the carried tail is only the start of a possible delimiter. Unless one
        // really begins there, it is part data: pass it on and scan the chunk as it is, rather
        // than copying every chunk of a large file behind it.
        const scanning = state === 'preamble' || state === 'field' || state === 'file';
        const probe =
          scanning && chunk.length >= delimiter.length
            ? Buffer.concat([carry, chunk.subarray(0, delimiter.length - 1)])
            : null;
        const at = probe ? probe.indexOf(delimiter) : 0;
        if (probe && (at < 0 || at >= carry.length)) {
          if (state === 'file') await writeFile(carry);
          else if (state === 'field') addField(carry);
        } else {
          buffer = Buffer.concat([carry, chunk]);
        }
      }
      carry = Buffer.alloc(0);
      for (;;) {
        if (state === 'preamble' || state === 'field' || state === 'file') {
          const at = buffer.indexOf(delimiter);
          if (at < 0) {
            // Keep what could be the start of a delimiter split across chunks.
            const keep = Math.min(buffer.length, delimiter.length - 1);
            const data = buffer.subarray(0, buffer.length - keep);
            if (state === 'file') await writeFile(data);
            else if (state === 'field') addField(data);
            carry = Buffer.from(buffer.subarray(buffer.length - keep));
            break;
          }
          const data = buffer.subarray(0, at);
          if (state === 'file') {
            await writeFile(data);
            file!.stream.end();
            fileResult = await file!.result;
            file = null;
          } else if (state === 'field') {
            addField(data);
            fields.set(field!.name, Buffer.concat(field!.chunks).toString('utf8'));
            field = null;
          }
          buffer = buffer.subarray(at + delimiter.length);
          state = 'after-delimiter';
          continue;
        }
        if (state === 'after-delimiter') {
          if (buffer.length < 2) {
            carry = Buffer.from(buffer);
            break;
          }
          if (buffer[0] === 0x2d && buffer[1] === 0x2d) {
            state = 'done';
            break;
          }
          // Transport padding, then CRLF.
          const eol = buffer.indexOf('\r\n');
          if (eol < 0) {
            if (buffer.length > 256) throw storageErrors.invalidRequest('Malformed multipart body');
            carry = Buffer.from(buffer);
            break;
          }
          buffer = buffer.subarray(eol + 2);
          state = 'headers';
          continue;
        }
        // headers
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) {
          if (buffer.length > MAX_PART_HEADER_BYTES)
            throw storageErrors.invalidRequest('Malformed multipart body');
          carry = Buffer.from(buffer);
          break;
        }
        const headers = parsePartHeaders(buffer.subarray(0, end).toString('utf8'));
        buffer = buffer.subarray(end + 4);
        const isFile = headers.filename !== null || headers.name === '' || headers.name === 'file';
        if (isFile && !fileSeen) {
          fileSeen = true;
          const stream = new PassThrough({ highWaterMark: 256 * 1024 });
          const result = onFile({ contentType: headers.contentType, stream }, fields);
          result.catch((error: unknown) => {
            failure = error;
            stream.destroy();
          });
          file = { stream, result };
          state = 'file';
        } else {
          field = { name: headers.name ?? '', chunks: [] };
          state = 'field';
        }
      }
      if (state === 'done') break;
    }
  } catch (error) {
    // The client went away or sent something malformed: the consumer stores nothing.
    if (file) {
      file.stream.destroy(error instanceof Error ? error : new Error(String(error)));
      await file.result.catch(() => undefined);
    }
    throw error;
  }
  if (state !== 'done') {
    const error = storageErrors.invalidRequest('Unexpected end of multipart body');
    if (file) {
      file.stream.destroy(error);
      await file.result.catch(() => undefined);
    }
    throw error;
  }
  return { fields, file: fileResult };
}
