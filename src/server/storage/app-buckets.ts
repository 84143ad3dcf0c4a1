// In charge of keeping the web app's buckets (migration 0077: profile pictures, workspace logos,
// project files) in step with configuration (APP_PICTURE_MAX_BYTES, APP_PROJECT_FILE_MAX_BYTES,
// APP_PROJECT_FILE_TYPES); the storage API enforces a bucket's limits on every upload, the app's
// pages read them to refuse a file before sending it. Run at start-up, after migrations.
import type { AppFilesConfig } from '../config.js';
import type { Queryable } from '../db/pool.js';

/** The buckets the web app keeps its files in. */
export const APP_BUCKETS = {
  avatars: 'profile-avatars',
  logos: 'workspace-logos',
  projectFiles: 'project-files',
} as const;

/** The picture types a browser can show and the cropper writes (never SVG: it can carry script). */
export const PICTURE_TYPES = ['image/png', 'image/jpeg', 'image/webp'];

export async function syncAppBuckets(db: Queryable, files: AppFilesConfig): Promise<void> {
  await db.query(
    `update storage.buckets b set file_size_limit = t.max_bytes, allowed_mime_types = t.types, updated_at = now()
     from (values ($1::text, $4::bigint, $6::text[]), ($2, $4, $6), ($3, $5, $7::text[])) as t(id, max_bytes, types)
     where b.id = t.id
       and (b.file_size_limit is distinct from t.max_bytes or b.allowed_mime_types is distinct from t.types)`,
    [
      APP_BUCKETS.avatars,
      APP_BUCKETS.logos,
      APP_BUCKETS.projectFiles,
      files.pictureMaxBytes,
      files.projectFileMaxBytes,
      PICTURE_TYPES,
      files.projectFileTypes,
    ],
  );
}
