// In charge of buckets: list, get, create, update, empty and delete, each run as the caller so
// the policies on storage.buckets (and storage.objects, to empty one) decide, as on Supabase.
import type { Claims } from '../db/transactions.js';
import { asCaller, SERVICE_CLAIMS, type StorageDeps } from './context.js';
import { storageErrors } from './errors.js';
import { bucketOptions, checkBucketId, intParam } from './shapes.js';

/** A bucket as the API answers it (storage-js's Bucket). */
export interface BucketRow {
  id: string;
  name: string;
  owner: string | null;
  public: boolean;
  file_size_limit: number | null;
  allowed_mime_types: string[] | null;
  created_at: Date;
  updated_at: Date;
}

/** A bucket's columns as the API answers them. */
export const BUCKET_COLUMNS = `id, name, coalesce(owner::text, owner_id) as owner, public,
  file_size_limit::float8 as file_size_limit, allowed_mime_types, created_at, updated_at`;

const SORT_COLUMNS = new Set(['id', 'name', 'created_at', 'updated_at']);

export async function listBuckets(
  deps: StorageDeps,
  claims: Claims,
  query: URLSearchParams,
): Promise<BucketRow[]> {
  const limit = intParam(query.get('limit'), 'limit', 1000, 0, 1000);
  const offset = intParam(query.get('offset'), 'offset', 0, 0, Number.MAX_SAFE_INTEGER);
  const search = query.get('search') ?? '';
  const column = query.get('sortColumn') ?? 'name';
  if (!SORT_COLUMNS.has(column))
    throw storageErrors.invalidRequest(`sortColumn must be one of id, name, created_at, updated_at`);
  const order = (query.get('sortOrder') ?? 'asc').toLowerCase();
  if (order !== 'asc' && order !== 'desc')
    throw storageErrors.invalidRequest('sortOrder must be asc or desc');
  // The column and order are chosen from the fixed sets above, never taken from the request's text.
  return asCaller(deps, claims, async (tx) => {
    const { rows } = await tx.query<BucketRow>(
      `select ${BUCKET_COLUMNS} from storage.buckets
       where $1 = '' or name ilike '%' || replace(replace(replace($1, '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%'
       order by ${column} ${order}, id limit $2 offset $3`,
      [search, limit, offset],
    );
    return rows;
  });
}

export async function getBucket(deps: StorageDeps, claims: Claims, id: string): Promise<BucketRow> {
  const rows = await asCaller(
    deps,
    claims,
    async (tx) =>
      (await tx.query<BucketRow>(`select ${BUCKET_COLUMNS} from storage.buckets where id = $1`, [id])).rows,
  );
  if (!rows[0]) throw storageErrors.noSuchBucket();
  return rows[0];
}

/** The bucket as the server sees it (no policy): uploads and public reads check it this way. */
export async function findBucket(deps: StorageDeps, id: string): Promise<BucketRow> {
  return getBucket(deps, SERVICE_CLAIMS, id);
}

export async function createBucket(
  deps: StorageDeps,
  claims: Claims,
  body: Record<string, unknown>,
): Promise<{ name: string }> {
  const id = checkBucketId(body.id ?? body.name);
  if (body.name !== undefined && body.name !== id) checkBucketId(body.name);
  if (body.type !== undefined && body.type !== 'STANDARD') {
    throw storageErrors.invalidRequest('Only STANDARD buckets are supported');
  }
  const options = bucketOptions(body, deps.limits.maxUploadBytes);
  await asCaller(deps, claims, (tx) =>
    tx.query(
      `insert into storage.buckets (id, name, owner, owner_id, public, file_size_limit, allowed_mime_types)
       values ($1, $1, $2::uuid, $2, $3, $4, $5)`,
      [
        id,
        typeof claims.sub === 'string' ? claims.sub : null,
        options.public ?? false,
        options.fileSizeLimit ?? null,
        options.allowedMimeTypes ?? null,
      ],
    ),
  );
  return { name: id };
}

export async function updateBucket(
  deps: StorageDeps,
  claims: Claims,
  id: string,
  body: Record<string, unknown>,
): Promise<{ message: string }> {
  const options = bucketOptions(body, deps.limits.maxUploadBytes);
  const { rowCount } = await asCaller(deps, claims, (tx) =>
    tx.query(
      `update storage.buckets set
         public = case when $2 then $3 else public end,
         file_size_limit = case when $4 then $5 else file_size_limit end,
         allowed_mime_types = case when $6 then $7 else allowed_mime_types end,
         updated_at = now()
       where id = $1`,
      [
        id,
        options.public !== undefined,
        options.public ?? false,
        options.fileSizeLimit !== undefined,
        options.fileSizeLimit ?? null,
        options.allowedMimeTypes !== undefined,
        options.allowedMimeTypes ?? null,
      ],
    ),
  );
  if (!rowCount) throw storageErrors.noSuchBucket();
  return { message: 'Successfully updated' };
}

/** Objects one transaction of emptyBucket deletes: a large bucket empties in many short steps. */
const EMPTY_BATCH = 1000;

/**
 * Deletes every object the caller may delete, in batches walked by id so each transaction stays
 * short (well within the statement timeout) and objects the caller may see but not delete are
 * stepped over; the bytes go through the deletion queue.
 */
export async function emptyBucket(
  deps: StorageDeps,
  claims: Claims,
  id: string,
): Promise<{ message: string }> {
  let after: string | null = null;
  for (;;) {
    const last: string | null = await asCaller(deps, claims, async (tx) => {
      if (after === null) {
        const found = await tx.query('select 1 from storage.buckets where id = $1', [id]);
        if (!found.rowCount) throw storageErrors.noSuchBucket();
      }
      const { rows } = await tx.query<{ last: string | null }>(
        `with picked as (
           select o.id from storage.objects o
           where o.bucket_id = $1 and ($2::uuid is null or o.id > $2::uuid) order by o.id limit $3
         ), gone as (
           delete from storage.objects o using picked where o.id = picked.id returning o.id
         )
         select (select p.id::text from picked p order by p.id desc limit 1) as last, (select count(*) from gone) as n`,
        [id, after, EMPTY_BATCH],
      );
      return rows[0]?.last ?? null;
    });
    deps.bytesReleased();
    if (last === null) break;
    after = last;
  }
  return { message: 'Empty bucket has been queued. Completion may take up to an hour.' };
}

export async function deleteBucket(
  deps: StorageDeps,
  claims: Claims,
  id: string,
): Promise<{ message: string }> {
  const { rowCount } = await asCaller(deps, claims, (tx) =>
    tx.query('delete from storage.buckets where id = $1', [id]),
  );
  if (!rowCount) throw storageErrors.noSuchBucket();
  return { message: 'Successfully deleted' };
}
