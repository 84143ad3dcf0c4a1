// In charge of the /storage/v1 HTTP surface on node:http: naming the caller, routing each path
// storage-js calls to its operation, and writing the answer (JSON, or an object's bytes streamed
// straight from the backend). Request bodies of uploads are never read here: they stream into the
// backend. It is the one place storage errors are rendered.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream/promises';
import { readNodeBody } from '../http/body.js';
import { addressGroup, clientAddress } from '../http/client-address.js';
import { FairGate } from '../http/fair-gate.js';
import { nodeHeaders, type HeaderReader } from '../http/headers.js';
import { isHttpError } from '../http/errors.js';
import { API_SECURITY_HEADERS, requestIdFrom } from '../http/node-api.js';
import { streamingUpload } from '../http/request-deadline.js';
import { isDatabaseUnavailable } from '../http/unavailable.js';
import type { TokenSigner } from '../identity/access-tokens.js';
import { resolveCaller, type ProjectKeys } from '../identity/caller.js';
import type { Claims } from '../db/transactions.js';
import type { Logger } from '../logger.js';
import {
  createBucket,
  deleteBucket,
  emptyBucket,
  findBucket,
  getBucket,
  listBuckets,
  updateBucket,
} from './buckets.js';
import { SERVICE_CLAIMS, type StorageDeps } from './context.js';
import { readerOf, serveObject, type StreamReply } from './download.js';
import { isStorageError, renderStorageError, StorageError, storageErrors } from './errors.js';
import { listV1, listV2 } from './listing.js';
import {
  copyObject,
  findObject,
  infoOf,
  moveObject,
  removeObjects,
  transferBody,
  writeObject,
  type WriteMode,
} from './objects.js';
import {
  answeredAsStorage,
  createResumableHandler,
  isResumablePath,
  RESUMABLE_PATH,
  resumableErrorReply,
} from './resumable.js';
import { jsonObject } from './shapes.js';
import { renderImage, signedTransformations, type ImageDeps } from './render.js';
import { signDownload, signDownloads, signUpload, verifySignedToken } from './signed-urls.js';

export const STORAGE_BASE_PATH = '/storage/v1';

export interface StorageRouteDeps extends StorageDeps {
  keys: ProjectKeys;
  signer: TokenSigner;
  trustProxy: boolean;
  /** APP_URL when given: where /storage/v1 is reached from outside (else the request's host) */
  publicUrl: string | null;
  /** connections storage requests may hold at once, and one caller's and one address's share */
  connections: number;
  callerConcurrency: number;
  addressConcurrency: number;
  /** image transformations (/render/image); null when STORAGE_IMAGE_TRANSFORMATION=off */
  images: ImageDeps | null;
}

/** How long a request may wait for its caller's turn at the database, and how many may wait. */
const MAX_WAIT_MS = 10_000;
const MAX_WAITING_PER_CALLER = 64;

type JsonReply = { status: number; json: unknown; headers?: Record<string, string> };
type Answer = JsonReply | StreamReply;

const CORS_ALLOW_HEADERS = [
  'authorization',
  'apikey',
  'content-type',
  'x-client-info',
  'x-upsert',
  'x-metadata',
  'cache-control',
  'range',
  'if-none-match',
  'x-signature',
].join(', ');

const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers':
    'content-range, content-length, content-type, content-disposition, etag, last-modified, cache-control, accept-ranges, x-request-id',
};

/** /storage/v1 and below, with or without a query string. */
export function isStorageRequest(url: string): boolean {
  return url.startsWith(STORAGE_BASE_PATH) && (url.length === 11 || url[11] === '/' || url[11] === '?');
}

/** The path's segments after a fixed head, decoded; a bad escape is the caller's error. */
function decodeSegments(path: string): string[] {
  try {
    return path
      .split('/')
      .filter((s) => s !== '')
      .map(decodeURIComponent);
  } catch {
    throw storageErrors.invalidRequest('The path is not validly encoded');
  }
}

/**
 * Storage answers a bearer without an apikey (storage-js alone sends only Authorization): the
 * project key is public, so reading its absence as the project key grants nothing.
 */
function withDefaultApiKey(headers: HeaderReader, keys: ProjectKeys): HeaderReader {
  return {
    get: (name) => headers.get(name) ?? (name.toLowerCase() === 'apikey' ? keys.projectApiKey : null),
  };
}

async function callerClaims(deps: StorageRouteDeps, headers: HeaderReader): Promise<Claims> {
  try {
    const caller = await resolveCaller(withDefaultApiKey(headers, deps.keys), deps.keys, deps.signer);
    return caller.claims as Claims;
  } catch (error) {
    if (isHttpError(error)) throw storageErrors.invalidJwt(error.message);
    throw error;
  }
}

/** /storage/v1 as the client reached it, for the URLs of resumable uploads. */
function storageBaseUrl(deps: StorageRouteDeps, req: IncomingMessage): string {
  if (deps.publicUrl) return `${deps.publicUrl}${STORAGE_BASE_PATH}`;
  const first = (name: string) => {
    const value = req.headers[name];
    return (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim() || undefined;
  };
  const encrypted = 'encrypted' in req.socket && req.socket.encrypted === true;
  const proto = (deps.trustProxy ? first('x-forwarded-proto') : undefined) ?? (encrypted ? 'https' : 'http');
  const host = (deps.trustProxy ? first('x-forwarded-host') : undefined) ?? first('host') ?? 'localhost';
  return `${proto === 'https' ? 'https' : 'http'}://${host}${STORAGE_BASE_PATH}`;
}

function ownerOf(claims: Claims): string | null {
  return typeof claims.sub === 'string' ? claims.sub : null;
}

export function createStorageHandler(deps: StorageRouteDeps, logger: Logger) {
  // Storage's database work is short, but many callers at once must not take every connection
  // from sign-ins, pages and the data API: its own fair gate, as the data API has.
  const gate = new FairGate({
    capacity: deps.connections,
    perCaller: deps.callerConcurrency,
    perAddress: deps.addressConcurrency,
    maxWaitingPerCaller: MAX_WAITING_PER_CALLER,
    maxWaitMs: MAX_WAIT_MS,
  });
  /** The request's dependencies: the shared ones, with turns at the database for its caller. */
  const requestDeps = (req: IncomingMessage): StorageRouteDeps => {
    const address = clientAddress(nodeHeaders(req.headers), req, deps.trustProxy);
    return {
      ...deps,
      // No client-gone signal here: a storage request takes several turns, and those after an
      // upload's last byte (completing it, cleaning up) must run even if the client left.
      turn: (claims, fn) =>
        gate.run(
          typeof claims.sub === 'string' ? `user:${claims.sub}` : `address:${address ?? 'unknown'}`,
          fn,
          addressGroup(address),
        ),
    };
  };

  async function route(
    req: IncomingMessage,
    res: ServerResponse,
    url: URL,
    d: StorageRouteDeps,
  ): Promise<Answer> {
    const method = req.method ?? 'GET';
    // An accepted upload's body may take longer than the request timeout while its bytes flow.
    const accepted = () => streamingUpload(req, res, d.limits.uploadIdleTimeoutMs);
    const headers = nodeHeaders(req.headers);
    const path = url.pathname.slice(STORAGE_BASE_PATH.length);
    const body = async () => {
      try {
        return jsonObject(await readNodeBody(req));
      } catch (error) {
        if (isHttpError(error))
          throw new StorageError(
            error.status,
            'InvalidRequest',
            'Invalid Input',
            error.message,
            error.status,
          );
        throw error;
      }
    };
    const claims = () => callerClaims(d, headers);
    const readRequest = {
      method,
      range: headers.get('range'),
      ifNoneMatch: headers.get('if-none-match'),
      download: url.searchParams.has('download') ? (url.searchParams.get('download') ?? '') : null,
    };
    const json = (value: unknown, status = 200): JsonReply => ({ status, json: value });

    // Buckets
    if (path === '/bucket' || path === '/bucket/') {
      if (method === 'GET') return json(await listBuckets(d, await claims(), url.searchParams));
      if (method === 'POST') return json(await createBucket(d, await claims(), await body()));
    }
    const bucketMatch = /^\/bucket\/([^/]+)(\/empty)?\/?$/.exec(path);
    if (bucketMatch) {
      const [id] = decodeSegments(bucketMatch[1]!);
      if (bucketMatch[2]) {
        if (method === 'POST') return json(await emptyBucket(d, await claims(), id!));
      } else {
        if (method === 'GET') return json(await getBucket(d, await claims(), id!));
        if (method === 'PUT') return json(await updateBucket(d, await claims(), id!, await body()));
        if (method === 'DELETE') return json(await deleteBucket(d, await claims(), id!));
      }
    }

    // Image transformations; switched off, these are unknown routes, as storage answers them then.
    if (d.images && path.startsWith('/render/image/') && (method === 'GET' || method === 'HEAD')) {
      const [kind, bucket, ...names] = decodeSegments(path.slice('/render/image/'.length));
      return renderImage(d, d.images, {
        kind: kind ?? '',
        bucket: bucket ?? '',
        name: names.join('/'),
        method,
        query: url.searchParams,
        accept: headers.get('accept'),
        ifNoneMatch: readRequest.ifNoneMatch,
        claims,
      });
    }
    if (isResumablePath(path)) {
      return createResumableHandler(d)({
        req,
        headers,
        rest: path.slice(RESUMABLE_PATH.length),
        claims,
        accepted,
        baseUrl: storageBaseUrl(d, req),
      });
    }

    if (!path.startsWith('/object/')) throw storageErrors.notFound();
    const rest = path.slice('/object/'.length);
    const [head, ...tail] = rest.split('/');
    const isRead = method === 'GET' || method === 'HEAD';

    if (method === 'POST' && (head === 'list' || head === 'list-v2') && tail.length >= 1) {
      const [bucket] = decodeSegments(tail.join('/'));
      const list = head === 'list' ? listV1 : listV2;
      return json(await list(d, await claims(), bucket!, await body()));
    }
    if (method === 'POST' && (head === 'move' || head === 'copy') && tail.length === 0) {
      const c = await claims();
      const transfer = transferBody(await body());
      if (head === 'move') return json(await moveObject(d, c, transfer));
      const upsert = headers.get('x-upsert') === 'true';
      return json(await copyObject(d, { claims: c, ownerId: ownerOf(c) }, transfer, upsert));
    }
    if (head === 'sign') {
      const [bucket, ...names] = decodeSegments(tail.join('/'));
      if (!bucket) throw storageErrors.notFound();
      const name = names.join('/');
      if (method === 'POST' && name === '')
        return json(await signDownloads(d, await claims(), bucket, await body()));
      if (method === 'POST') {
        const images = d.images;
        const transform = images ? (t: unknown) => signedTransformations(images, t) : undefined;
        return json(await signDownload(d, await claims(), bucket, name, await body(), transform));
      }
      if (isRead) {
        await verifySignedToken(d, url.searchParams.get('token'), 'download', bucket, name);
        return serveObject(d, SERVICE_CLAIMS, bucket, name, readRequest);
      }
    }
    if (head === 'upload' && tail[0] === 'sign') {
      const [bucket, ...names] = decodeSegments(tail.slice(1).join('/'));
      const name = names.join('/');
      if (!bucket || !name) throw storageErrors.notFound();
      if (method === 'POST') {
        return json(await signUpload(d, await claims(), bucket, name, headers.get('x-upsert') === 'true'));
      }
      if (method === 'PUT') {
        const token = await verifySignedToken(d, url.searchParams.get('token'), 'upload', bucket, name);
        // The policies were checked when the URL was signed; the write runs as the server, for the signer.
        const writer = { claims: SERVICE_CLAIMS, ownerId: token.owner ?? null };
        const mode: WriteMode = token.upsert ? 'upsert' : 'create';
        const written = await writeObject(d, writer, bucket, name, mode, { headers, body: req, accepted });
        return json({ Key: written.Key, Id: written.Id });
      }
    }
    if ((head === 'public' || head === 'authenticated') && isRead) {
      const [bucket, ...names] = decodeSegments(tail.join('/'));
      if (!bucket || names.length === 0) throw storageErrors.notFound();
      if (head === 'public') {
        // Public buckets skip row-level security for reads, and only for reads.
        const found = await findBucket(d, bucket);
        if (!found.public) throw storageErrors.noSuchBucket();
        return serveObject(d, SERVICE_CLAIMS, bucket, names.join('/'), readRequest);
      }
      const reader = await readerOf(d, await claims(), bucket);
      return serveObject(d, reader, bucket, names.join('/'), readRequest);
    }
    if (head === 'info' && method === 'GET') {
      let segments = decodeSegments(tail.join('/'));
      let mode: 'public' | 'authenticated' = 'authenticated';
      if ((segments[0] === 'public' || segments[0] === 'authenticated') && segments.length > 2) {
        mode = segments[0];
        segments = segments.slice(1);
      }
      const [bucket, ...names] = segments;
      if (!bucket || names.length === 0) throw storageErrors.notFound();
      let as: Claims;
      if (mode === 'public') {
        if (!(await findBucket(d, bucket)).public) throw storageErrors.noSuchBucket();
        as = SERVICE_CLAIMS;
      } else as = await readerOf(d, await claims(), bucket);
      return json(infoOf(await findObject(d, as, bucket, names.join('/'))));
    }

    // /object/{bucket}[/{name}]
    const [bucket, ...names] = decodeSegments(rest);
    if (!bucket) throw storageErrors.notFound();
    const name = names.join('/');
    if (name === '') {
      if (method === 'DELETE') {
        const { prefixes } = await body();
        if (!Array.isArray(prefixes) || prefixes.some((p) => typeof p !== 'string')) {
          throw storageErrors.invalidRequest('prefixes must be an array of object names');
        }
        if (prefixes.length > d.limits.batchMax) {
          throw storageErrors.invalidRequest(`At most ${d.limits.batchMax} prefixes (STORAGE_BATCH_MAX)`);
        }
        return json(await removeObjects(d, await claims(), bucket, prefixes as string[]));
      }
      throw storageErrors.notFound();
    }
    if (method === 'POST' || method === 'PUT') {
      const c = await claims();
      const mode: WriteMode =
        method === 'PUT' ? 'update' : headers.get('x-upsert') === 'true' ? 'upsert' : 'create';
      const written = await writeObject(d, { claims: c, ownerId: ownerOf(c) }, bucket, name, mode, {
        headers,
        body: req,
        accepted,
      });
      return json(written);
    }
    if (isRead) return serveObject(d, await readerOf(d, await claims(), bucket), bucket, name, readRequest);
    if (method === 'DELETE') {
      const removed = await removeObjects(d, await claims(), bucket, [name]);
      if (removed.length === 0) throw storageErrors.noSuchKey();
      return json({ message: 'Successfully deleted' });
    }
    throw storageErrors.notFound();
  }

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const started = performance.now();
    const raw = req.headers['x-request-id'];
    const requestId = requestIdFrom(Array.isArray(raw) ? raw[0] : raw);
    const method = req.method ?? 'GET';
    const url = new URL(req.url ?? '/', 'http://storage.invalid');
    const common: Record<string, string> = {
      ...API_SECURITY_HEADERS,
      'X-Request-Id': requestId,
      ...CORS_HEADERS,
    };
    let status: number;
    // A resumable upload's OPTIONS is the protocol's own discovery (versions, extensions, size).
    const resumable = isResumablePath(url.pathname.slice(STORAGE_BASE_PATH.length));
    if (method === 'OPTIONS' && !resumable) {
      status = 204;
      res.writeHead(204, {
        ...common,
        'Access-Control-Allow-Methods': 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS',
        'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS,
        'Access-Control-Max-Age': '86400',
      });
      res.end();
    } else {
      let answer: Answer;
      try {
        answer = await route(req, res, url, requestDeps(req));
      } catch (error) {
        let e: StorageError;
        if (isStorageError(error)) e = error;
        else if (isHttpError(error) && error.status === 429) {
          e = storageErrors.busy(Number(error.headers['Retry-After'] ?? 1), error.message);
        } else if (isDatabaseUnavailable(error))
          e = storageErrors.busy(5, 'The database is busy; try again shortly');
        else {
          logger.error({ err: error, path: url.pathname }, 'storage request failed');
          e = storageErrors.internal();
        }
        const extra = (e as StorageError & { headers?: Record<string, string> }).headers ?? {};
        if (resumable && !answeredAsStorage(error)) {
          // Resumable uploads answer refusals as tus servers do: the status, the message as text.
          const reply = resumableErrorReply(e);
          answer = { ...reply, headers: { ...reply.headers, ...extra } };
        } else {
          const rendered = renderStorageError(e);
          answer = { status: rendered.status, json: JSON.parse(rendered.body) as unknown, headers: extra };
        }
        // A refused upload's body was not read: close rather than read the rest of it.
        if (!req.readableEnded) res.shouldKeepAlive = false;
      }
      status = answer.status;
      if ('json' in answer) {
        const text = method === 'HEAD' ? '' : JSON.stringify(answer.json);
        res.writeHead(answer.status, {
          ...common,
          ...answer.headers,
          'Content-Type': 'application/json; charset=utf-8',
          'Content-Length': Buffer.byteLength(text),
        });
        res.end(text);
      } else {
        res.writeHead(answer.status, { ...common, ...answer.headers });
        if (answer.stream) {
          await pipeline(answer.stream, res).catch((error: unknown) => {
            // The client went away or the backend failed mid-object: the response cannot be mended.
            logger.warn({ err: error, path: url.pathname }, 'storage response ended early');
            res.destroy();
          });
        } else res.end();
      }
    }
    logger.info(
      {
        requestId,
        method,
        path: url.pathname,
        status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      },
      'request',
    );
  };
}
