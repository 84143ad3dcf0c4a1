// Notification preferences: how often the activity digest comes, and which workspaces it skips
// (listed a page at a time, searchable, for accounts in many workspaces).
import { PageHeader } from '@/app/components/page-header';
import { hrefWith, Pager } from '@/app/components/pager';
import { SearchForm } from '@/app/components/search-form';
import { Card, CardContent } from '@/app/components/ui/card';
import { pageRequest } from '@/app/lib/paging';
import { notificationSettings } from '@/app/lib/queries/notifications';
import { requireUser } from '@/app/lib/session';
import { NotificationsForm } from '@/app/settings/notifications/notifications-form';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Notifications' };

export default async function NotificationsPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const user = await requireUser('/settings/notifications');
  const params = await searchParams;
  const request = pageRequest(params);
  const { prefs, workspaces } = await notificationSettings(user, request);
  const many = request.q !== '' || workspaces.page > 1 || workspaces.hasNext;
  return (
    <>
      <PageHeader title="Notifications" description="What Tenantry e-mails you about, and how often." />
      <Card>
        <CardContent className="grid grid-cols-1 gap-6">
          {many ? (
            <SearchForm
              id="muted-search"
              path="/settings/notifications"
              name="q"
              value={request.q}
              label="Find workspaces to leave out of the digest, by name"
              placeholder="Find a workspace"
              clearHref="/settings/notifications"
            />
          ) : null}
          <NotificationsForm
            frequency={prefs.frequency}
            muted={prefs.muted}
            workspaces={workspaces.items}
            searching={request.q}
          />
          <Pager
            label="Workspaces"
            result={workspaces}
            href={(n) => hrefWith('/settings/notifications', params, { page: n })}
          />
        </CardContent>
      </Card>
    </>
  );
}
