// In charge of resumable uploads at /storage/v1/upload/resumable (TUS 1.0.0, as Supabase Storage
// serves it to tus-js-client and Uppy): creating an upload with the same checks as a normal upload
// (bucket, size, type, plan bytes, the policies tried and rolled back), receiving its chunks into
// the backend as parts, answering its offset, terminating it, and on the last chunk joining the
// parts into the object and writing its row as the caller, so the policies decide again and the
// object appears whole or not at all. The signed variant (/sign) is authorised by x-signature.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { Claims } from '../db/transactions.js';
import type { HeaderReader } from '../http/headers.js';
import { assembleParts, ObjectTooLarge, type StoredObject } from './backends/index.js';
import { SERVICE_CLAIMS, type StorageDeps } from './context.js';
import type { StreamReply } from './download.js';
import { StorageError, storageErrors } from './errors.js';
import { newVersion, objectKey } from './keys.js';
import { checkWrite, limitsFor, recordStoredObject, tooLarge, uploadTarget, type Writer } from './objects.js';
import {
  addPart,
  claimCompletion,
  createUpload,
  findUpload,
  releaseObjectKey,
  removeUpload,
  type ResumableUpload,
} from './resumable-uploads.js';
import { checkBucketId, checkObjectName, mimeAllowed } from './shapes.js';
import { verifySignedToken } from './signed-urls.js';
import {
  nonNegativeInteger,
  OFFSET_OCTET_STREAM,
  parseUploadId,
  parseUploadMetadata,
  TUS_ALLOW_HEADERS,
  TUS_EXPOSE_HEADERS,
  TUS_EXTENSIONS,
  TUS_METHODS,
  TUS_VERSION,
  tusErrors,
  uploadIdOf,
} from './tus.js';

export const RESUMABLE_PATH = '/upload/resumable';

export interface ResumableRequest {
  req: IncomingMessage;
  headers: HeaderReader;
  /** the path below /storage/v1/upload/resumable */
  rest: string;
  /** the caller's claims, verified (a normal upload's Authorization and apikey) */
  claims: () => Promise<Claims>;
  /** the upload is accepted: its body is bounded by progress, not the request timeout */
  accepted: () => void;
  /** where /storage/v1 is reached from outside, for Location */
  baseUrl: string;
}

/** Who continues an upload: a caller with a token, or the holder of a signed upload URL. */
type Actor = { signed: false; claims: Claims } | { signed: true; owner: string | null; upsert: boolean };

/** Whether a path below /storage/v1 is a resumable upload's. */
export function isResumablePath(path: string): boolean {
  return path === RESUMABLE_PATH || path.startsWith(`${RESUMABLE_PATH}/`);
}

function reply(status: number, headers: Record<string, string>, text = ''): StreamReply {
  return {
    status,
    headers: {
      'Tus-Resumable': TUS_VERSION,
      'Access-Control-Expose-Headers': TUS_EXPOSE_HEADERS,
      ...headers,
      ...(text
        ? { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(Buffer.byteLength(text)) }
        : {}),
    },
    stream: text ? Readable.from([Buffer.from(text)]) : null,
  };
}

/** A refusal as tus clients read it: the status the error names, its message as text. */
export function resumableErrorReply(error: StorageError): StreamReply {
  return reply(error.statusCode, {}, error.message);
}

/** Refusals made before the protocol is spoken (the caller's token), answered in storage's body. */
const beforeTus = new WeakSet<object>();

/** Whether a resumable upload's refusal is answered in storage's JSON body rather than as TUS text. */
export function answeredAsStorage(error: unknown): boolean {
  return typeof error === 'object' && error !== null && beforeTus.has(error);
}

/**
 * The caller's claims. As on Supabase, whose token check runs before its TUS handler, a token that
 * is refused is answered in storage's JSON body (HTTP 400, statusCode 403), not as TUS text.
 */
async function callerClaims(request: ResumableRequest): Promise<Claims> {
  try {
    return await request.claims();
  } catch (error) {
    if (typeof error === 'object' && error !== null) beforeTus.add(error);
    throw error;
  }
}

async function actorOf(
  deps: StorageDeps,
  request: ResumableRequest,
  signed: boolean,
  bucketId: string,
  name: string,
): Promise<Actor> {
  if (!signed) return { signed: false, claims: await callerClaims(request) };
  const signature = request.headers.get('x-signature');
  if (!signature) throw storageErrors.invalidSignature('Missing x-signature header');
  const token = await verifySignedToken(deps, signature, 'upload', bucketId, name);
  return { signed: true, owner: token.owner ?? null, upsert: token.upsert === true };
}

/** The policies of a signed upload were checked when its URL was signed: it writes as the server. */
function writerOf(actor: Actor, ownerId: string | null): Writer {
  return { claims: actor.signed ? SERVICE_CLAIMS : actor.claims, ownerId };
}

/** The upload's size is within the limits as they are now (bucket, server, the plan's bytes left). */
async function checkSize(deps: StorageDeps, bucketId: string, name: string, length: number) {
  const { bucket, room } = await uploadTarget(deps, bucketId, name);
  const limits = limitsFor(deps, bucket, room);
  if (length > limits.maxBytes) throw limits.planBound ? tooLarge(limits) : tusErrors.maxSizeExceeded();
  return bucket;
}

/** storage's reading of the cacheControl metadata: seconds become max-age, anything else no-cache. */
function cacheControlOf(value: string | undefined): string {
  return value !== undefined && /^-?\d{1,12}$/.test(value) ? `max-age=${value}` : 'no-cache';
}

/** The metadata entry as user metadata; as Supabase does, what is not a JSON object is left out. */
function userMetadataOf(value: string | undefined): Record<string, unknown> | null {
  if (!value) return null;
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

export function createResumableHandler(deps: StorageDeps) {
  const forget = (keys: string[]) =>
    deps.backend
      .delete(keys)
      .catch((e: unknown) => deps.logger.warn({ err: e, keys }, 'could not delete unused upload parts'));

  /**
   * The last bytes are in: joins the parts into the object's key and writes its row as the actor,
   * once (a concurrent writer loses with 409). Refused or failed, the upload goes with every byte
   * it stored; nothing of it was ever visible.
   */
  async function complete(upload: ResumableUpload, actor: Actor, lastPart: string | null): Promise<void> {
    const key = objectKey(upload.id);
    if (!(await claimCompletion(deps, upload.id, upload.offset, lastPart, key))) {
      if (lastPart) await forget([lastPart]);
      throw tusErrors.offsetConflict();
    }
    const parts = lastPart ? [...upload.parts, lastPart] : upload.parts;
    let stored: StoredObject;
    try {
      stored = await assembleParts(deps.backend, parts, key, {
        maxBytes: upload.length,
        contentType: upload.contentType,
      });
      if (stored.size !== upload.length) throw new Error('the joined parts are not the declared length');
    } catch (error) {
      await removeUpload(deps, upload.id).catch(() => undefined);
      throw error;
    }
    try {
      await releaseObjectKey(deps, upload.id, key);
    } catch (error) {
      await removeUpload(deps, upload.id).catch(() => undefined);
      throw error;
    }
    try {
      await recordStoredObject(
        deps,
        writerOf(actor, upload.ownerId),
        upload.upsert ? 'upsert' : 'create',
        { bucketId: upload.bucketId, name: upload.name, version: upload.id },
        stored,
        {
          contentType: upload.contentType,
          cacheControl: upload.cacheControl,
          userMetadata: upload.userMetadata,
        },
      );
    } catch (error) {
      await forget([key]);
      await removeUpload(deps, upload.id).catch(() => undefined);
      throw error;
    }
    // The object exists; the upload goes and its parts are queued for deletion. Should this fail,
    // the upload (completing, refusing chunks) expires later with the same effect.
    await removeUpload(deps, upload.id).catch((e: unknown) =>
      deps.logger.warn({ err: e, upload: upload.id }, 'could not remove a completed resumable upload'),
    );
  }

  /** Stores the request's body as the upload's next part; answers the new offset. */
  async function receive(
    request: ResumableRequest,
    upload: ResumableUpload,
    actor: Actor,
  ): Promise<{ offset: number; complete: boolean }> {
    const remaining = upload.length - upload.offset;
    const declared = request.headers.get('content-length');
    if (declared !== null && nonNegativeInteger(declared, 'content-length') > remaining)
      throw tusErrors.sizeExceeded();
    // The limits as they are now: a bucket's may have tightened, the plan's bytes been taken.
    await checkSize(deps, upload.bucketId, upload.name, upload.length);
    request.accepted();
    const part = `resumable/${upload.id}/${upload.offset}-${randomBytes(6).toString('hex')}`;
    let stored: StoredObject;
    try {
      stored = await deps.backend.put(part, request.req, { maxBytes: remaining });
    } catch (error) {
      if (error instanceof ObjectTooLarge) throw tusErrors.maxSizeExceeded();
      // The client went away mid-chunk: nothing of it is kept, it resumes from the offset.
      if (!request.req.complete) throw tusErrors.aborted();
      throw error;
    }
    const offset = upload.offset + stored.size;
    if (offset === upload.length) {
      await complete(upload, actor, part);
      return { offset, complete: true };
    }
    if (stored.size === 0) {
      await forget([part]);
      return { offset, complete: false };
    }
    if (!(await addPart(deps, upload.id, upload.offset, part, stored.size))) {
      await forget([part]);
      throw tusErrors.offsetConflict();
    }
    return { offset, complete: false };
  }

  async function create(request: ResumableRequest, signed: boolean): Promise<StreamReply> {
    const { headers } = request;
    if (headers.get('upload-concat') !== null) throw tusErrors.concatenation();
    if (headers.get('upload-defer-length') !== null) throw tusErrors.deferLength();
    const rawLength = headers.get('upload-length');
    if (rawLength === null) throw tusErrors.invalidLength();
    const length = nonNegativeInteger(rawLength, 'upload-length');
    const metadata = parseUploadMetadata(headers.get('upload-metadata'));
    if (!metadata?.get('bucketName') || !metadata.get('objectName')) throw tusErrors.metadataRequired();
    const bucketId = checkBucketId(metadata.get('bucketName'));
    const name = checkObjectName(metadata.get('objectName'));

    const actor = await actorOf(deps, request, signed, bucketId, name);
    const bucket = await checkSize(deps, bucketId, name, length);
    const contentType = metadata.get('contentType') || 'application/octet-stream';
    if (!mimeAllowed(bucket.allowed_mime_types, contentType)) throw storageErrors.invalidMime(contentType);
    const upsert = actor.signed ? actor.upsert : headers.get('x-upsert') === 'true';
    const ownerId = actor.signed
      ? actor.owner
      : typeof actor.claims.sub === 'string'
        ? actor.claims.sub
        : null;
    // As a normal upload: the write is tried as the caller and rolled back before anything is kept.
    if (!actor.signed)
      await checkWrite(deps, writerOf(actor, ownerId), bucketId, name, upsert ? 'upsert' : 'create');

    const upload = await createUpload(
      deps,
      {
        id: newVersion(),
        bucketId,
        name,
        length,
        upsert,
        creatorRole: actor.signed ? 'signed' : String(actor.claims.role ?? 'anon'),
        creatorSub: actor.signed || typeof actor.claims.sub !== 'string' ? null : actor.claims.sub,
        signed: actor.signed,
        ownerId,
        contentType,
        cacheControl: cacheControlOf(metadata.get('cacheControl')),
        userMetadata: userMetadataOf(metadata.get('metadata')),
        metadataHeader: headers.get('upload-metadata') ?? '',
      },
      deps.limits.resumableExpirySeconds,
    );
    const location = `${request.baseUrl}${RESUMABLE_PATH}${signed ? '/sign' : ''}/${uploadIdOf(bucketId, name, upload.id)}`;
    const answer: Record<string, string> = { Location: location };
    let done = false;
    if (headers.get('content-type') === OFFSET_OCTET_STREAM) {
      // creation-with-upload: the first chunk came with the request.
      const received = await receive(request, upload, actor);
      answer['Upload-Offset'] = String(received.offset);
      done = received.complete;
    } else if (length === 0) {
      await complete(upload, actor, null);
      done = true;
    }
    if (done) answer['Tus-Complete'] = '1';
    else answer['Upload-Expires'] = upload.expiresAt.toUTCString();
    return reply(201, answer);
  }

  /** The upload an id names, continued by the one who created it (or a valid signature for its path). */
  async function existing(
    request: ResumableRequest,
    signed: boolean,
    id: string,
  ): Promise<{ upload: ResumableUpload; actor: Actor }> {
    const named = parseUploadId(id);
    if (!named) throw tusErrors.notFound();
    const actor = await actorOf(deps, request, signed, named.bucketId, named.name);
    const upload = await findUpload(deps, named.version);
    if (!upload || upload.bucketId !== named.bucketId || upload.name !== named.name)
      throw tusErrors.notFound();
    const sameCaller = actor.signed
      ? upload.signed
      : !upload.signed &&
        upload.creatorRole === String(actor.claims.role ?? 'anon') &&
        upload.creatorSub === (typeof actor.claims.sub === 'string' ? actor.claims.sub : null);
    if (!sameCaller) throw tusErrors.notOwner();
    if (upload.expiresAt.getTime() <= Date.now()) throw tusErrors.expired();
    return { upload, actor };
  }

  return async function handle(incoming: ResumableRequest): Promise<StreamReply> {
    // The token is verified once per request, however many steps ask for the caller.
    let verified: Promise<Claims> | undefined;
    const request = { ...incoming, claims: () => (verified ??= incoming.claims()) };
    const method = request.req.method ?? 'GET';
    if (method === 'OPTIONS') {
      return reply(204, {
        'Tus-Version': TUS_VERSION,
        'Tus-Extension': TUS_EXTENSIONS,
        'Tus-Max-Size': String(deps.limits.maxUploadBytes),
        'Access-Control-Allow-Methods': TUS_METHODS,
        'Access-Control-Allow-Headers': TUS_ALLOW_HEADERS,
        'Access-Control-Max-Age': '86400',
      });
    }
    const segments = request.rest.split('/').filter((s) => s !== '');
    const signed = segments[0] === 'sign';
    if (signed) segments.shift();
    // The token is checked first, as Supabase's route checks it before the protocol is looked at.
    if (!signed) await callerClaims(request);
    if (request.headers.get('tus-resumable') === null) throw tusErrors.resumableRequired();
    if (segments.length === 0) {
      if (method === 'POST') return create(request, signed);
      throw tusErrors.notFound();
    }
    if (segments.length !== 1) throw tusErrors.notFound();
    const id = segments[0]!;
    if (method === 'HEAD') {
      const { upload } = await existing(request, signed, id);
      return reply(200, {
        'Cache-Control': 'no-store',
        'Upload-Offset': String(upload.offset),
        'Upload-Length': String(upload.length),
        ...(upload.metadataHeader ? { 'Upload-Metadata': upload.metadataHeader } : {}),
      });
    }
    if (method === 'PATCH') {
      const contentType = request.headers.get('content-type');
      if (contentType === null) throw tusErrors.missingContentType();
      if (contentType !== OFFSET_OCTET_STREAM) throw tusErrors.invalidHeader('content-type');
      const rawOffset = request.headers.get('upload-offset');
      if (rawOffset === null) throw tusErrors.missingOffset();
      const offset = nonNegativeInteger(rawOffset, 'upload-offset');
      const { upload, actor } = await existing(request, signed, id);
      if (upload.completing || upload.offset !== offset) throw tusErrors.offsetConflict();
      const received = await receive(request, upload, actor);
      return reply(204, {
        'Upload-Offset': String(received.offset),
        ...(received.complete
          ? { 'Tus-Complete': '1' }
          : { 'Upload-Expires': upload.expiresAt.toUTCString() }),
      });
    }
    if (method === 'DELETE') {
      const { upload } = await existing(request, signed, id);
      if (upload.completing)
        throw new StorageError(
          400,
          'InvalidTermination',
          'Resumable upload',
          'Cannot terminate an already completed upload',
          400,
        );
      await removeUpload(deps, upload.id);
      return reply(204, {});
    }
    throw tusErrors.notFound();
  };
}
