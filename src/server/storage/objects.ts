// In charge of objects: writing one (raw body or multipart, create, upsert or update) with every
// limit enforced while the bytes stream, reading one (whole or a range), its info, moving,
// copying and removing. Each runs as the caller, so the policies Supabase checks for the operation
// are the ones checked here: insert to create; insert, select and update to upsert; select and
// update to update or move; select and insert to copy; select and delete to remove; select to read.
import { randomUUID } from 'node:crypto';
import type { Tx } from '../db/transactions.js';
import type { Claims } from '../db/transactions.js';
import { ObjectTooLarge, type StoredObject } from './backends/types.js';
import { BUCKET_COLUMNS, findBucket, type BucketRow } from './buckets.js';
import { asCaller, dryRun, SERVICE_CLAIMS, type StorageDeps } from './context.js';
import { storageErrors } from './errors.js';
import { newVersion, objectKey } from './keys.js';
import { multipartBoundary, readMultipart } from './multipart.js';
import { cacheControlOf, checkObjectName, mimeAllowed, userMetadataOf } from './shapes.js';
import type { HeaderReader } from '../http/headers.js';

export type WriteMode = 'create' | 'upsert' | 'update';

/** Who writes: the caller's claims (whose policies decide) and the owner the row records. */
export interface Writer {
  claims: Claims;
  ownerId: string | null;
}

export interface UploadInput {
  headers: HeaderReader;
  body: AsyncIterable<Buffer> & NodeJS.ReadableStream;
  /** called once the upload is accepted, before its bytes are read (long uploads' timeout) */
  accepted?: () => void;
}

export interface ObjectRow {
  id: string;
  bucket_id: string;
  name: string;
  owner: string | null;
  owner_id: string | null;
  version: string | null;
  metadata: ObjectMetadata | null;
  user_metadata: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
  last_accessed_at: Date;
}

/** The system metadata storage keeps per object (storage-js's FileMetadata). */
export interface ObjectMetadata {
  eTag: string;
  size: number;
  mimetype: string;
  cacheControl: string;
  lastModified: string;
  contentLength: number;
  httpStatusCode: number;
}

const OBJECT_COLUMNS = `id, bucket_id, name, owner::text as owner, owner_id, version, metadata, user_metadata,
  created_at, updated_at, last_accessed_at`;

function metadataOf(stored: StoredObject, mimetype: string, cacheControl: string): ObjectMetadata {
  return {
    eTag: `"${stored.etag.replace(/"/g, '')}"`,
    size: stored.size,
    mimetype,
    cacheControl,
    lastModified: stored.lastModified.toISOString(),
    contentLength: stored.size,
    httpStatusCode: 200,
  };
}

/**
 * The one statement that writes an object's row for each mode; null version in a dry run. Inserts
 * return nothing: RETURNING would also demand a select policy, and Supabase asks only for insert
 * to upload (select joins in for upsert and update, which read the existing row anyway).
 */
function writeStatement(mode: WriteMode): string {
  const values = `($1, $2, $3::uuid, $4, $5, $6::jsonb, $7::jsonb, $8::uuid)`;
  const insert = `insert into storage.objects (bucket_id, name, owner, owner_id, version, metadata, user_metadata, id)
    values ${values}`;
  if (mode === 'create') return insert;
  const set = `owner = excluded.owner, owner_id = excluded.owner_id, version = excluded.version,
    metadata = excluded.metadata, user_metadata = excluded.user_metadata, updated_at = now(), last_accessed_at = now()`;
  if (mode === 'upsert') return `${insert} on conflict (bucket_id, name) do update set ${set}`;
  return `update storage.objects as o set ${set.replace(/excluded\./g, 'n.')}
    from (values ${values}) as n (bucket_id, name, owner, owner_id, version, metadata, user_metadata, id)
    where o.bucket_id = n.bucket_id and o.name = n.name returning o.id`;
}

async function writeRow(
  tx: Tx,
  mode: WriteMode,
  bucketId: string,
  name: string,
  writer: Writer,
  version: string | null,
  metadata: ObjectMetadata | null,
  userMetadata: Record<string, unknown> | null,
): Promise<string> {
  const id = randomUUID();
  const result = await tx.query<{ id: string }>(writeStatement(mode), [
    bucketId,
    name,
    writer.ownerId,
    writer.ownerId,
    version,
    metadata === null ? null : JSON.stringify(metadata),
    userMetadata === null ? null : JSON.stringify(userMetadata),
    id,
  ]);
  if (mode === 'update') {
    if (!result.rows[0]) throw storageErrors.noSuchKey();
    return result.rows[0].id;
  }
  if (!result.rowCount) throw storageErrors.accessDenied();
  if (mode === 'create') return id;
  // An upsert that replaced a row kept that row's id; the caller may read it (upsert needs select).
  const existing = await tx.query<{ id: string }>(
    'select id from storage.objects where bucket_id = $1 and name = $2',
    [bucketId, name],
  );
  return existing.rows[0]?.id ?? id;
}

/**
 * The bucket an upload goes to, as the server sees it, and the bytes the workspace's plan still
 * allows for this name (its current size counted back; null outside workspace buckets): one
 * statement, since every upload asks both.
 */
export async function uploadTarget(
  deps: StorageDeps,
  bucketId: string,
  name: string,
): Promise<{ bucket: BucketRow; room: number | null }> {
  const { rows } = await asCaller(deps, SERVICE_CLAIMS, (tx) =>
    tx.query<BucketRow & { room: string | null }>(
      `select ${BUCKET_COLUMNS},
              (select tenantry.storage_bytes_limit(w.ws) - tenantry.storage_bytes_used(w.ws)
                      + coalesce((select (o.metadata->>'size')::bigint from storage.objects o
                                  where o.bucket_id = $1 and o.name = $2), 0)
               from (select internal.object_workspace($1, string_to_array($2, '/')) as ws) w
               where w.ws is not null) as room
       from storage.buckets where id = $1`,
      [bucketId, name],
    ),
  );
  const row = rows[0];
  if (!row) throw storageErrors.noSuchBucket();
  const { room, ...bucket } = row;
  return { bucket, room: room === null ? null : Math.max(0, Number(room)) };
}

export interface Limits {
  maxBytes: number;
  /** the plan's room was the binding limit (its refusal names the plan) */
  planBound: boolean;
}

export function limitsFor(deps: StorageDeps, bucket: BucketRow, room: number | null): Limits {
  const bucketMax = Math.min(deps.limits.maxUploadBytes, bucket.file_size_limit ?? Infinity);
  if (room !== null && room < bucketMax) return { maxBytes: room, planBound: true };
  return { maxBytes: bucketMax, planBound: false };
}

export function tooLarge(limits: Limits) {
  return limits.planBound
    ? storageErrors.planBytes("This workspace has reached its plan's storage limit")
    : storageErrors.tooLarge();
}

/** Whether the policies allow the write now (tried and rolled back): signed upload URLs check this. */
export async function checkWrite(
  deps: StorageDeps,
  writer: Writer,
  bucketId: string,
  name: string,
  mode: WriteMode,
): Promise<void> {
  await findBucket(deps, bucketId);
  await dryRun(deps, writer.claims, (tx) => writeRow(tx, mode, bucketId, name, writer, null, null, null));
}

/**
 * Writes an object. In order: the bucket exists, the declared size and type are allowed, the
 * policies allow the write (tried and rolled back before a byte is read), the bytes stream into a
 * new key within every limit, then the row is written as the caller; if that fails, the new bytes
 * are deleted and nothing is visible.
 */
export async function writeObject(
  deps: StorageDeps,
  writer: Writer,
  bucketId: string,
  rawName: string,
  mode: WriteMode,
  input: UploadInput,
): Promise<{ Id: string; Key: string }> {
  const name = checkObjectName(rawName);
  const { bucket, room } = await uploadTarget(deps, bucketId, name);
  const limits = limitsFor(deps, bucket, room);
  const declared = Number(input.headers.get('content-length') ?? NaN);
  const boundary = multipartBoundary(input.headers.get('content-type'));
  // A multipart body carries a few hundred bytes of framing beyond the file.
  if (Number.isFinite(declared) && declared > limits.maxBytes + (boundary ? 64 * 1024 : 0))
    throw tooLarge(limits);

  const rawType = boundary ? null : (input.headers.get('content-type') ?? 'application/octet-stream');
  if (rawType !== null && !mimeAllowed(bucket.allowed_mime_types, rawType))
    throw storageErrors.invalidMime(rawType);

  await dryRun(deps, writer.claims, (tx) => writeRow(tx, mode, bucketId, name, writer, null, null, null));
  input.accepted?.();

  const version = newVersion();
  const key = objectKey(version);
  const store = async (body: NodeJS.ReadableStream, contentType: string) => {
    try {
      return await deps.backend.put(key, body, { maxBytes: limits.maxBytes, contentType });
    } catch (error) {
      if (error instanceof ObjectTooLarge) throw tooLarge(limits);
      throw error;
    }
  };

  let stored: StoredObject;
  let contentType: string;
  let cacheControl: string;
  let userMetadata: Record<string, unknown> | null;
  if (boundary) {
    let fileType = 'application/octet-stream';
    const result = await readMultipart(input.body, boundary, async (part, fields) => {
      fileType = fields.get('contentType') ?? part.contentType ?? 'application/octet-stream';
      if (!mimeAllowed(bucket.allowed_mime_types, fileType)) throw storageErrors.invalidMime(fileType);
      return store(part.stream, fileType);
    });
    if (!result.file) throw storageErrors.invalidRequest('The multipart body has no file part');
    stored = result.file;
    contentType = fileType;
    cacheControl = cacheControlOf(result.fields.get('cacheControl'));
    userMetadata = userMetadataOf(result.fields.get('metadata'), false);
  } else {
    contentType = rawType!;
    cacheControl = cacheControlOf(input.headers.get('cache-control'));
    userMetadata = userMetadataOf(input.headers.get('x-metadata'), true);
    stored = await store(input.body, contentType);
  }

  try {
    const id = await asCaller(deps, writer.claims, (tx) =>
      writeRow(
        tx,
        mode,
        bucketId,
        name,
        writer,
        version,
        metadataOf(stored, contentType, cacheControl),
        userMetadata,
      ),
    );
    // Only a replacement gives up bytes (the version it replaced).
    if (mode !== 'create') deps.bytesReleased();
    return { Id: id, Key: `${bucketId}/${name}` };
  } catch (error) {
    await deps.backend
      .delete([key])
      .catch((e: unknown) => deps.logger.warn({ err: e, key }, 'could not delete unused bytes'));
    throw error;
  }
}

/**
 * Writes the row of an object whose bytes are already stored under the key of `version` (a
 * resumable upload's last step), as the writer, so the policies decide as for any upload.
 */
export async function recordStoredObject(
  deps: StorageDeps,
  writer: Writer,
  mode: WriteMode,
  target: { bucketId: string; name: string; version: string },
  stored: StoredObject,
  details: { contentType: string; cacheControl: string; userMetadata: Record<string, unknown> | null },
): Promise<{ Id: string; Key: string }> {
  const id = await asCaller(deps, writer.claims, (tx) =>
    writeRow(
      tx,
      mode,
      target.bucketId,
      target.name,
      writer,
      target.version,
      metadataOf(stored, details.contentType, details.cacheControl),
      details.userMetadata,
    ),
  );
  if (mode !== 'create') deps.bytesReleased();
  return { Id: id, Key: `${target.bucketId}/${target.name}` };
}

/** The object's row as the claims see it (SERVICE_CLAIMS: as the server sees it). */
export async function findObject(
  deps: StorageDeps,
  claims: Claims,
  bucketId: string,
  name: string,
): Promise<ObjectRow> {
  const rows = await asCaller(
    deps,
    claims,
    async (tx) =>
      (
        await tx.query<ObjectRow>(
          `select ${OBJECT_COLUMNS} from storage.objects where bucket_id = $1 and name = $2`,
          [bucketId, name],
        )
      ).rows,
  );
  if (!rows[0]) throw storageErrors.noSuchKey();
  return rows[0];
}

/** storage-js's FileObjectV2, as info answers it. */
export function infoOf(row: ObjectRow) {
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    bucket_id: row.bucket_id,
    size: row.metadata?.size ?? 0,
    content_type: row.metadata?.mimetype ?? 'application/octet-stream',
    cache_control: row.metadata?.cacheControl ?? 'no-cache',
    etag: row.metadata?.eTag ?? '',
    metadata: row.user_metadata ?? {},
    last_modified: row.metadata?.lastModified ?? row.updated_at.toISOString(),
    created_at: row.created_at,
  };
}

/** A FileObject as remove and list answer it. */
export function fileObjectOf(row: ObjectRow) {
  return {
    name: row.name,
    bucket_id: row.bucket_id,
    owner: row.owner ?? row.owner_id,
    id: row.id,
    updated_at: row.updated_at,
    created_at: row.created_at,
    last_accessed_at: row.last_accessed_at,
    metadata: row.metadata,
  };
}

export interface TransferBody {
  bucketId: string;
  sourceKey: string;
  destinationKey: string;
  destinationBucket: string;
  metadata: Record<string, unknown> | null;
  copyMetadata: boolean;
}

export function transferBody(body: Record<string, unknown>): TransferBody {
  const text = (v: unknown, what: string) => {
    if (typeof v !== 'string' || v === '') throw storageErrors.invalidRequest(`${what} is required`);
    return v;
  };
  const bucketId = text(body.bucketId, 'bucketId');
  const destinationBucket =
    body.destinationBucket === undefined || body.destinationBucket === null
      ? bucketId
      : text(body.destinationBucket, 'destinationBucket');
  let metadata: Record<string, unknown> | null = null;
  if (body.metadata !== undefined && body.metadata !== null) {
    if (typeof body.metadata !== 'object' || Array.isArray(body.metadata)) {
      throw storageErrors.invalidRequest('metadata must be an object');
    }
    metadata = body.metadata as Record<string, unknown>;
  }
  return {
    bucketId,
    sourceKey: checkObjectName(text(body.sourceKey, 'sourceKey')),
    destinationKey: checkObjectName(text(body.destinationKey, 'destinationKey')),
    destinationBucket,
    metadata,
    copyMetadata: body.copyMetadata !== false,
  };
}

/** Moves (renames) an object, within or across buckets: a row update, the bytes stay. */
export async function moveObject(
  deps: StorageDeps,
  claims: Claims,
  body: TransferBody,
): Promise<{ message: string }> {
  const destination = await findBucket(deps, body.destinationBucket);
  await asCaller(deps, claims, async (tx) => {
    const { rows } = await tx.query<{ metadata: ObjectMetadata | null }>(
      'select metadata from storage.objects where bucket_id = $1 and name = $2',
      [body.bucketId, body.sourceKey],
    );
    if (!rows[0]) throw storageErrors.noSuchKey();
    // Onto itself, the destination exists: refused as a move onto any existing name is.
    if (destination.id === body.bucketId && body.destinationKey === body.sourceKey)
      throw storageErrors.keyExists();
    checkAgainstBucket(deps, destination, rows[0].metadata);
    const moved = await tx.query(
      `update storage.objects set bucket_id = $3, name = $4, updated_at = now()
       where bucket_id = $1 and name = $2`,
      [body.bucketId, body.sourceKey, destination.id, body.destinationKey],
    );
    if (!moved.rowCount) throw storageErrors.accessDenied();
  });
  return { message: 'Successfully moved' };
}

/** The destination bucket accepts an object of this size and type. */
function checkAgainstBucket(deps: StorageDeps, bucket: BucketRow, metadata: ObjectMetadata | null): void {
  const size = metadata?.size ?? 0;
  if (size > Math.min(deps.limits.maxUploadBytes, bucket.file_size_limit ?? Infinity))
    throw storageErrors.tooLarge();
  const type = metadata?.mimetype ?? 'application/octet-stream';
  if (!mimeAllowed(bucket.allowed_mime_types, type)) throw storageErrors.invalidMime(type);
}

/** Copies an object (new bytes under a new key), within or across buckets. */
export async function copyObject(
  deps: StorageDeps,
  writer: Writer,
  body: TransferBody,
  upsert: boolean,
): Promise<{ Id: string; Key: string }> {
  const destination = await findBucket(deps, body.destinationBucket);
  const source = await findObject(deps, writer.claims, body.bucketId, body.sourceKey);
  if (!source.version) throw storageErrors.noSuchKey();
  checkAgainstBucket(deps, destination, source.metadata);
  const mode: WriteMode = upsert ? 'upsert' : 'create';
  await dryRun(deps, writer.claims, (tx) =>
    writeRow(tx, mode, destination.id, body.destinationKey, writer, null, null, null),
  );
  const version = newVersion();
  const key = objectKey(version);
  const stored = await deps.backend.copy(objectKey(source.version), key);
  const metadata = source.metadata
    ? {
        ...source.metadata,
        eTag: `"${stored.etag.replace(/"/g, '')}"`,
        lastModified: stored.lastModified.toISOString(),
      }
    : null;
  const userMetadata = body.copyMetadata ? (body.metadata ?? source.user_metadata) : body.metadata;
  try {
    const id = await asCaller(deps, writer.claims, (tx) =>
      writeRow(tx, mode, destination.id, body.destinationKey, writer, version, metadata, userMetadata),
    );
    if (mode !== 'create') deps.bytesReleased();
    return { Id: id, Key: `${destination.id}/${body.destinationKey}` };
  } catch (error) {
    await deps.backend.delete([key]).catch(() => undefined);
    throw error;
  }
}

/** Removes the named objects the caller may see and delete; answers those removed. */
export async function removeObjects(deps: StorageDeps, claims: Claims, bucketId: string, names: string[]) {
  const rows = await asCaller(deps, claims, async (tx) => {
    const found = await tx.query('select 1 from storage.buckets where id = $1', [bucketId]);
    if (!found.rowCount && claims.role === 'service_role') throw storageErrors.noSuchBucket();
    return (
      await tx.query<ObjectRow>(
        `delete from storage.objects where bucket_id = $1 and name = any ($2::text[]) returning ${OBJECT_COLUMNS}`,
        [bucketId, names],
      )
    ).rows;
  });
  deps.bytesReleased();
  return rows.map(fileObjectOf);
}
