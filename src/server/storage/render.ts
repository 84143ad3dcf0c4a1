// In charge of /render/image/{authenticated|public|sign}/{bucket}/{name}: who may see the image
// (the same rules as the object's download: the caller's policies, a public bucket, or a signed
// URL whose token carries the transformations), the options asked, and the answer storage gives
// (the rendering with its type and length, the object's cache-control, ETag and Last-Modified,
// X-Transformations). Signing a URL with a `transform` also goes through here.
import { Readable } from 'node:stream';
import type { Claims } from '../db/transactions.js';
import { findBucket } from './buckets.js';
import { SERVICE_CLAIMS, type StorageDeps } from './context.js';
import { readerOf, type StreamReply } from './download.js';
import { storageErrors } from './errors.js';
import type { ImageRenderer } from './image-renderer.js';
import {
  transformationsClaim,
  transformationsHeader,
  transformFromBody,
  transformFromClaim,
  transformFromQuery,
  type TransformOptions,
} from './image-options.js';
import { findObject } from './objects.js';
import { verifySignedToken } from './signed-urls.js';

export interface ImageDeps {
  renderer: ImageRenderer;
  /** STORAGE_IMAGE_MAX_DIMENSION */
  maxDimension: number;
}

export interface RenderRequest {
  kind: string;
  bucket: string;
  name: string;
  method: string;
  query: URLSearchParams;
  accept: string | null;
  ifNoneMatch: string | null;
  claims: () => Promise<Claims>;
}

/** The `transformations` claim for a signed URL asked with body.transform; null without one. */
export function signedTransformations(images: ImageDeps, transform: unknown): string | null {
  const options = transformFromBody(transform, images.maxDimension);
  return options ? transformationsClaim(options) : null;
}

/** WebP is answered when the client lists it (browsers do), as storage's image service decides. */
function acceptsWebp(accept: string | null): boolean {
  if (!accept) return false;
  return accept.split(',').some((item) => {
    const [type, ...params] = item.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    return type === 'image/webp' && (q === undefined || Number(q.slice(2)) > 0);
  });
}

export async function renderImage(
  deps: StorageDeps,
  images: ImageDeps,
  request: RenderRequest,
): Promise<StreamReply> {
  const { kind, bucket, name } = request;
  if (!bucket || !name || !['authenticated', 'public', 'sign'].includes(kind)) {
    throw storageErrors.notFound();
  }
  let options: TransformOptions;
  let as: Claims;
  let expires: string | null = null;
  if (kind === 'sign') {
    const token = await verifySignedToken(deps, request.query.get('token'), 'download', bucket, name);
    options = transformFromClaim(token.transformations, images.maxDimension);
    if (typeof token.exp === 'number') expires = new Date(token.exp * 1000).toUTCString();
    as = SERVICE_CLAIMS;
  } else {
    // Checked before anything is looked up: a bad option changes nothing and costs nothing.
    options = transformFromQuery(request.query, images.maxDimension);
    if (kind === 'public') {
      // Public buckets skip row-level security for reads, and only for reads.
      if (!(await findBucket(deps, bucket)).public) throw storageErrors.noSuchBucket();
      as = SERVICE_CLAIMS;
    } else as = await readerOf(deps, await request.claims(), bucket);
  }
  const row = await findObject(deps, as, bucket, name);
  if (!row.version) throw storageErrors.noSuchKey();

  const metadata = row.metadata;
  const headers: Record<string, string> = {
    'cache-control': metadata?.cacheControl ?? 'no-cache',
    'last-modified': new Date(metadata?.lastModified ?? row.updated_at).toUTCString(),
    // The same URL answers WebP or the source's format by the Accept header.
    vary: 'Accept',
    // As for downloads: the rendering is served from the app's own origin.
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; sandbox",
  };
  if (metadata?.eTag) headers.etag = metadata.eTag;
  if (expires) headers.expires = expires;
  const applied = transformationsHeader(options);
  if (applied) headers['x-transformations'] = applied;
  const download = request.query.get('download');
  if (download !== null) {
    const filename = download || name.split('/').pop() || 'download';
    headers['content-disposition'] = `attachment; filename*=UTF-8''${encodeURIComponent(filename)}`;
  }
  if (
    request.ifNoneMatch &&
    headers.etag &&
    request.ifNoneMatch.split(',').some((t) => t.trim() === headers.etag)
  ) {
    return { status: 304, headers, stream: null };
  }

  const rendered = await images.renderer.render(
    { version: row.version, size: metadata?.size ?? 0 },
    options,
    acceptsWebp(request.accept),
  );
  headers['content-type'] = rendered.contentType;
  headers['content-length'] = String(rendered.body.length);
  if (request.method === 'HEAD') return { status: 200, headers, stream: null };
  return { status: 200, headers, stream: Readable.from([rendered.body]) };
}
