// In charge of the one preference change the digest module makes itself: turning a user's digest
// off from a signed unsubscribe link (no session needed, so it runs with service privileges).
import type { Pool } from '../db/pool.js';

export async function turnDigestOff(pool: Pool, userId: string): Promise<boolean> {
  const result = await pool.query(
    `update public.notification_preferences set digest_frequency = 'off' where user_id = $1`,
    [userId],
  );
  return (result.rowCount ?? 0) > 0;
}
