// In charge of the records of resumable uploads in progress (internal.storage_resumable_uploads,
// migration 0073): creating one, advancing its offset by a stored part only from the offset the
// part was written at (so of two writers at once, one wins and the other learns of the conflict),
// claiming its completion once, and removing it (finished, terminated or expired), which queues
// the bytes of its parts for deletion in the same statement.
import type { Pool } from '../db/pool.js';
import { withService } from '../db/transactions.js';
import { asCaller, SERVICE_CLAIMS, type StorageDeps } from './context.js';

export interface ResumableUpload {
  id: string;
  bucketId: string;
  name: string;
  length: number;
  offset: number;
  parts: string[];
  completing: boolean;
  upsert: boolean;
  creatorRole: string;
  creatorSub: string | null;
  signed: boolean;
  ownerId: string | null;
  contentType: string;
  cacheControl: string;
  userMetadata: Record<string, unknown> | null;
  metadataHeader: string;
  createdAt: Date;
  expiresAt: Date;
}

const COLUMNS = `id::text, bucket_id as "bucketId", name, upload_length::float8 as length,
  upload_offset::float8 as "offset", parts, completing, upsert, creator_role as "creatorRole",
  creator_sub as "creatorSub", signed, owner_id as "ownerId", content_type as "contentType",
  cache_control as "cacheControl", user_metadata as "userMetadata", metadata_header as "metadataHeader",
  created_at as "createdAt", expires_at as "expiresAt"`;

export type NewUpload = Omit<ResumableUpload, 'offset' | 'parts' | 'completing' | 'createdAt' | 'expiresAt'>;

export async function createUpload(
  deps: StorageDeps,
  upload: NewUpload,
  expirySeconds: number,
): Promise<ResumableUpload> {
  const { rows } = await asCaller(deps, SERVICE_CLAIMS, (tx) =>
    tx.query<ResumableUpload>(
      `insert into internal.storage_resumable_uploads (id, bucket_id, name, upload_length, upsert,
         creator_role, creator_sub, signed, owner_id, content_type, cache_control, user_metadata,
         metadata_header, expires_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13,
         now() + make_interval(secs => $14))
       returning ${COLUMNS}`,
      [
        upload.id,
        upload.bucketId,
        upload.name,
        upload.length,
        upload.upsert,
        upload.creatorRole,
        upload.creatorSub,
        upload.signed,
        upload.ownerId,
        upload.contentType,
        upload.cacheControl,
        upload.userMetadata === null ? null : JSON.stringify(upload.userMetadata),
        upload.metadataHeader,
        expirySeconds,
      ],
    ),
  );
  return rows[0]!;
}

export async function findUpload(deps: StorageDeps, id: string): Promise<ResumableUpload | null> {
  const { rows } = await asCaller(deps, SERVICE_CLAIMS, (tx) =>
    tx.query<ResumableUpload>(`select ${COLUMNS} from internal.storage_resumable_uploads where id = $1`, [
      id,
    ]),
  );
  return rows[0] ?? null;
}

/**
 * Adds a stored part of `size` bytes written at offset `from`: only while the upload is still at
 * that offset, unexpired and not completing. False when another writer got there first (or the
 * upload is gone): the part is then the caller's to delete.
 */
export async function addPart(
  deps: StorageDeps,
  id: string,
  from: number,
  key: string,
  size: number,
): Promise<boolean> {
  const result = await asCaller(deps, SERVICE_CLAIMS, (tx) =>
    tx.query(
      `update internal.storage_resumable_uploads
       set upload_offset = upload_offset + $4, parts = parts || $3::text
       where id = $1 and upload_offset = $2 and not completing and expires_at > now()`,
      [id, from, key, size],
    ),
  );
  return result.rowCount === 1;
}

/**
 * Claims the completion of an upload at offset `from` whose last part is stored at `lastPart`
 * (null: no bytes left to send): from here both that part and the object's key are the upload's,
 * so removing the upload removes them. False when another writer got there first.
 */
export async function claimCompletion(
  deps: StorageDeps,
  id: string,
  from: number,
  lastPart: string | null,
  objectKey: string,
): Promise<boolean> {
  const result = await asCaller(deps, SERVICE_CLAIMS, (tx) =>
    tx.query(
      `update internal.storage_resumable_uploads
       set completing = true, parts = parts || array_remove(array[$3::text, $4::text], null)
       where id = $1 and upload_offset = $2 and not completing and expires_at > now()`,
      [id, from, lastPart, objectKey],
    ),
  );
  return result.rowCount === 1;
}

/**
 * The joined object is about to be named by its row: its key is no longer the upload's, so no later
 * removal of the upload (expiry included) can take the object's bytes. Until its row is written it
 * is the caller's to delete.
 */
export async function releaseObjectKey(deps: StorageDeps, id: string, objectKey: string): Promise<void> {
  await asCaller(deps, SERVICE_CLAIMS, (tx) =>
    tx.query(`update internal.storage_resumable_uploads set parts = array_remove(parts, $2) where id = $1`, [
      id,
      objectKey,
    ]),
  );
}

/** Removes the upload and queues every byte it stored (terminated, or its completion refused). */
export async function removeUpload(deps: StorageDeps, id: string): Promise<boolean> {
  const result = await asCaller(deps, SERVICE_CLAIMS, (tx) =>
    tx.query('delete from internal.storage_resumable_uploads where id = $1', [id]),
  );
  deps.bytesReleased();
  return result.rowCount === 1;
}

/** Removes every upload past its expiry (their parts' bytes queued for deletion); answers how many. */
export async function expireUploads(pool: Pool): Promise<number> {
  return withService(pool, async (tx) => {
    const result = await tx.query('delete from internal.storage_resumable_uploads where expires_at <= now()');
    return result.rowCount ?? 0;
  });
}
