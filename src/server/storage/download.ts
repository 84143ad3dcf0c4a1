// In charge of answering an object's bytes: the headers storage sends (type, length, cache
// control, ETag, Last-Modified), conditional requests (If-None-Match: 304) and byte ranges (206,
// or 416 for a range past the end), streamed from the backend without holding the object.
import type { Claims } from '../db/transactions.js';
import { findBucket } from './buckets.js';
import { SERVICE_CLAIMS, type StorageDeps } from './context.js';
import { storageErrors } from './errors.js';
import { objectKey } from './keys.js';
import { findObject, type ObjectRow } from './objects.js';

export interface StreamReply {
  status: number;
  headers: Record<string, string>;
  /** null for HEAD, 304 and 416 */
  stream: NodeJS.ReadableStream | null;
}

/** The one range asked for, inclusive; null = the whole object; 'unsatisfiable' past the end. */
export function parseRange(
  header: string | null,
  size: number,
): { start: number; end: number } | null | 'unsatisfiable' {
  if (!header) return null;
  const match = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // Several ranges or another unit: answered whole, as HTTP allows.
  if (!match || (match[1] === '' && match[2] === '')) return null;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}

function baseHeaders(row: ObjectRow): Record<string, string> {
  const metadata = row.metadata;
  const headers: Record<string, string> = {
    'content-type': metadata?.mimetype ?? 'application/octet-stream',
    'cache-control': metadata?.cacheControl ?? 'no-cache',
    'accept-ranges': 'bytes',
    'last-modified': new Date(metadata?.lastModified ?? row.updated_at).toUTCString(),
    // Files are served from the app's own origin: an uploaded HTML or SVG page opened from its URL
    // must not run script as the app (reading its pages, calling its actions with the viewer's
    // cookies). A sandbox makes such a document an origin of its own, with nothing allowed.
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
  };
  if (metadata?.eTag) headers.etag = metadata.eTag;
  return headers;
}

export interface ReadRequest {
  method: string;
  range: string | null;
  ifNoneMatch: string | null;
  /** ?download or ?download=<name>: answer as an attachment */
  download: string | null;
}

/** The object as the claims may read it, answered with its bytes (or headers only). */
/** Reads of a public bucket skip row-level security, for every caller; other buckets' follow the policies. */
export async function readerOf(deps: StorageDeps, claims: Claims, bucketId: string): Promise<Claims> {
  if (claims.role === 'service_role') return claims;
  return (await findBucket(deps, bucketId)).public ? SERVICE_CLAIMS : claims;
}

export async function serveObject(
  deps: StorageDeps,
  claims: Claims,
  bucketId: string,
  name: string,
  request: ReadRequest,
  extraHeaders: Record<string, string> = {},
): Promise<StreamReply> {
  const row = await findObject(deps, claims, bucketId, name);
  if (!row.version) throw storageErrors.noSuchKey();
  const size = row.metadata?.size ?? 0;
  const headers = { ...baseHeaders(row), ...extraHeaders };
  if (request.download !== null) {
    const filename = request.download || name.split('/').pop() || 'download';
    headers['content-disposition'] = `attachment; filename*=UTF-8''${encodeURIComponent(filename)}`;
  }
  if (
    request.ifNoneMatch &&
    headers.etag &&
    request.ifNoneMatch.split(',').some((t) => t.trim() === headers.etag)
  ) {
    return { status: 304, headers, stream: null };
  }
  const range = parseRange(request.range, size);
  if (range === 'unsatisfiable') {
    throw Object.assign(storageErrors.invalidRange(), { headers: { 'content-range': `bytes */${size}` } });
  }
  if (request.method === 'HEAD') {
    headers['content-length'] = String(size);
    return { status: 200, headers, stream: null };
  }
  const found = await deps.backend.get(objectKey(row.version), range ?? undefined);
  if (!found) throw storageErrors.noSuchKey();
  if (range) {
    headers['content-range'] = `bytes ${range.start}-${range.end}/${size}`;
    headers['content-length'] = String(range.end - range.start + 1);
    return { status: 206, headers, stream: found.stream };
  }
  headers['content-length'] = String(found.object.size);
  return { status: 200, headers, stream: found.stream };
}
