// In charge of reading what the notifications page needs: the digest preferences and the
// workspaces that can be left out of it.
import { myNotificationPreferences, type NotificationPreferences } from '@/app/lib/queries/profile';
import { myWorkspaces, type WorkspaceSummary } from '@/app/lib/queries/workspaces';
import type { SignedIn } from '@/app/lib/session';

export async function notificationSettings(
  user: SignedIn,
): Promise<{ prefs: NotificationPreferences; workspaces: WorkspaceSummary[] }> {
  const [prefs, workspaces] = await Promise.all([myNotificationPreferences(user), myWorkspaces(user)]);
  return { prefs, workspaces };
}
