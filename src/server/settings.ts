// In charge of the service settings the database itself needs (the public base URL, for links in
// e-mails written by database functions; how many workspaces one user may own, checked where
// workspaces are inserted; how large a user's metadata may be, checked where users are written),
// kept in step with configuration at start-up.
import type { Queryable } from './db/pool.js';

export interface AppSettings {
  appUrl: string;
  /** left as it is when not given */
  maxWorkspacesPerUser?: number;
  /** left as it is when not given */
  maxMetadataBytes?: number;
}

export async function syncAppSettings(db: Queryable, settings: AppSettings): Promise<void> {
  await db.query(
    `update internal.app_settings
     set app_url = $1, max_workspaces_per_user = coalesce($2::integer, max_workspaces_per_user),
       max_metadata_bytes = coalesce($3::integer, max_metadata_bytes)`,
    [settings.appUrl, settings.maxWorkspacesPerUser ?? null, settings.maxMetadataBytes ?? null],
  );
}
