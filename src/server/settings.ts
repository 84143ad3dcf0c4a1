// In charge of the service settings the database itself needs (today: the public base URL, for
// links in e-mails written by database functions), kept in step with configuration at start-up.
import type { Queryable } from './db/pool.js';

export async function syncAppSettings(db: Queryable, settings: { appUrl: string }): Promise<void> {
  await db.query('update internal.app_settings set app_url = $1', [settings.appUrl]);
}
