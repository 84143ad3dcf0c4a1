// In charge of what pages and server actions need from storage: addresses for pictures and files
// the viewer may read (signed, so the browser fetches them without the session's token, which
// stays in its HttpOnly cookie), signed upload addresses for writes the viewer's policies allow
// now, and the limits a file is checked against before it is sent. The bytes themselves travel
// between the browser and /storage/v1; pages never hold them.
import type { SignedIn } from '@/app/lib/session';
import { asUser } from '@/app/lib/db';
import type { UploadLimits } from '@/app/lib/file-checks';
import { createLogger } from '@/server/logger';
import { getRuntime } from '@/server/runtime';
import type { StorageDeps } from '@/server/storage/context';
import { withService } from '@/server/db/transactions';
import { signUpload, urlSigningKeyFrom, windowedDownloadPath } from '@/server/storage/signed-urls';

export { APP_BUCKETS, PICTURE_TYPES } from '@/server/storage/app-buckets';

/** Where the storage API is served, as the browser addresses it. */
export const STORAGE_PATH = '/storage/v1';

/**
 * Pictures' addresses stay the same for an hour (their tokens live two), so a picture shown on
 * every page is fetched once an hour, not once a page.
 */
const PICTURE_WINDOW_SECONDS = 3600;
/** A file's download address, made when its list is shown, lives as long as a picture's. */
const FILE_WINDOW_SECONDS = 3600;

let deps: StorageDeps | null = null;

/** Storage's operations as pages use them: signing and checking, never bytes (no backend). */
function storage(): StorageDeps {
  if (deps) return deps;
  const { pool, config } = getRuntime();
  const noBytes = () =>
    Promise.reject(new Error('pages never move bytes; the browser sends them to storage'));
  deps = {
    pool,
    backend: { put: noBytes, get: noBytes, head: noBytes, copy: noBytes, delete: noBytes },
    logger: createLogger('warn'),
    limits: config.storage,
    urlSigningKey: urlSigningKeyFrom(config.jwtSecret),
    bytesReleased: () => undefined,
  };
  return deps;
}

/**
 * Addresses of the named objects of one bucket that the viewer may read (by the bucket's
 * policies, asked once for all of them); names the viewer may not read, or that are gone, are
 * left out, so the page shows initials instead.
 */
export async function readableUrls(
  user: SignedIn,
  bucket: string,
  names: readonly (string | null | undefined)[],
  download?: (name: string) => string,
): Promise<Map<string, string>> {
  const wanted = [...new Set(names.filter((n): n is string => Boolean(n)))];
  const urls = new Map<string, string>();
  if (wanted.length === 0) return urls;
  const visible = await asUser(user, async (tx) => {
    const r = await tx.query<{ name: string }>(
      'select name from storage.objects where bucket_id = $1 and name = any ($2::text[])',
      [bucket, wanted],
    );
    return r.rows.map((row) => row.name);
  });
  const key = storage().urlSigningKey;
  const window = download ? FILE_WINDOW_SECONDS : PICTURE_WINDOW_SECONDS;
  await Promise.all(
    visible.map(async (name) => {
      const path = await windowedDownloadPath(key, bucket, name, window);
      const asFile = download ? `&download=${encodeURIComponent(download(name))}` : '';
      urls.set(name, `${STORAGE_PATH}${path}${asFile}`);
    }),
  );
  return urls;
}

/** One picture's address, or null (not set, gone, or not the viewer's to see). */
export async function pictureUrl(
  user: SignedIn,
  bucket: string,
  name: string | null,
): Promise<string | null> {
  if (!name) return null;
  return (await readableUrls(user, bucket, [name])).get(name) ?? null;
}

/** The limits an upload to `name` in `bucket` is held to: the bucket's size and types, the plan's room. */
export async function uploadLimits(bucket: string, name: string): Promise<UploadLimits> {
  const { pool, config } = getRuntime();
  const r = await withService(pool, (tx) =>
    tx.query<{ size: string | null; types: string[] | null; room: string | null }>(
      `select b.file_size_limit::text as size, b.allowed_mime_types as types,
              (select (tenantry.storage_bytes_limit(w.ws) - tenantry.storage_bytes_used(w.ws))::text
               from (select internal.object_workspace($1, string_to_array($2, '/')) as ws) w
               where w.ws is not null) as room
       from storage.buckets b where b.id = $1`,
      [bucket, name],
    ),
  );
  const row = r.rows[0];
  if (!row) throw new Error(`the ${bucket} bucket is missing`);
  const bucketMax = Math.min(config.storage.maxUploadBytes, row.size === null ? Infinity : Number(row.size));
  const room = row.room === null ? null : Math.max(0, Number(row.room));
  if (room !== null && room < bucketMax) return { maxBytes: room, planBound: true, types: row.types };
  return { maxBytes: bucketMax, planBound: false, types: row.types };
}

/**
 * An address the browser sends the file to, signed for the viewer after their policies allowed
 * the write (tried and rolled back); the file is recorded as theirs. Throws the storage refusal.
 */
export async function signedUploadUrl(user: SignedIn, bucket: string, name: string): Promise<string> {
  const { url } = await signUpload(storage(), user.claims, bucket, name, false);
  return `${STORAGE_PATH}${url}`;
}
