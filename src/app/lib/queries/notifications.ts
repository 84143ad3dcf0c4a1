// In charge of reading what the notifications page needs: the digest preferences and one page of
// the workspaces that can be left out of it.
import type { PageRequest, Paged } from '@/app/lib/paging';
import { myNotificationPreferences, type NotificationPreferences } from '@/app/lib/queries/profile';
import { workspaceNamesPage } from '@/app/lib/queries/workspaces';
import type { SignedIn } from '@/app/lib/session';

export async function notificationSettings(
  user: SignedIn,
  request: PageRequest,
): Promise<{ prefs: NotificationPreferences; workspaces: Paged<{ id: string; name: string }> }> {
  const [prefs, workspaces] = await Promise.all([
    myNotificationPreferences(user),
    workspaceNamesPage(user, request),
  ]);
  return { prefs, workspaces };
}
