// In charge of reading the signed-in user's own profile (header, profile page) and notification
// preferences.
import { cache } from 'react';
import { asUser } from '@/app/lib/db';
import { APP_BUCKETS, pictureUrl } from '@/app/lib/files';
import type { SignedIn } from '@/app/lib/session';

export interface Profile {
  email: string;
  displayName: string | null;
  /** where the browser fetches the profile picture (uploaded, or an address set before uploads), or null */
  avatarUrl: string | null;
  /** the uploaded picture's name in storage, or null */
  avatarPath: string | null;
}

/** Once per request: the header and the page may both ask. */
export const myProfile = cache(async (user: SignedIn): Promise<Profile> => {
  const row = await asUser(user, async (tx) => {
    const r = await tx.query<{
      email: string;
      displayName: string | null;
      avatarPath: string | null;
      legacy: string | null;
    }>(
      `select email, display_name as "displayName", avatar_path as "avatarPath", avatar_url as legacy
       from public.profiles where id = auth.uid()`,
    );
    return r.rows[0] ?? null;
  });
  if (!row) return { email: user.email, displayName: null, avatarUrl: null, avatarPath: null };
  const uploaded = await pictureUrl(user, APP_BUCKETS.avatars, row.avatarPath);
  return {
    email: row.email,
    displayName: row.displayName,
    avatarPath: row.avatarPath,
    avatarUrl: uploaded ?? (row.avatarPath ? null : row.legacy),
  };
});

export interface NotificationPreferences {
  frequency: 'off' | 'daily' | 'weekly';
  muted: string[];
}

export async function myNotificationPreferences(user: SignedIn): Promise<NotificationPreferences> {
  return asUser(user, async (tx) => {
    const r = await tx.query<NotificationPreferences>(
      `select digest_frequency as frequency, muted_workspace_ids as muted
       from public.notification_preferences where user_id = auth.uid()`,
    );
    return r.rows[0] ?? { frequency: 'weekly', muted: [] };
  });
}
