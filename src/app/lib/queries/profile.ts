// In charge of reading the signed-in user's own profile (header, profile page) and notification
// preferences.
import { cache } from 'react';
import { asUser } from '@/app/lib/db';
import type { SignedIn } from '@/app/lib/session';

export interface Profile {
  email: string;
  displayName: string | null;
  avatarUrl: string | null;
}

/** Once per request: the header and the page may both ask. */
export const myProfile = cache(async (user: SignedIn): Promise<Profile> =>
  asUser(user, async (tx) => {
    const r = await tx.query<Profile>(
      `select email, display_name as "displayName", avatar_url as "avatarUrl"
       from public.profiles where id = auth.uid()`,
    );
    return r.rows[0] ?? { email: user.email, displayName: null, avatarUrl: null };
  }),
);

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
