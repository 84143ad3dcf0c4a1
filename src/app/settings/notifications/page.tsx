// Notification preferences: how often the activity digest comes, and which workspaces it skips.
import { PageHeader } from '@/app/components/page-header';
import { Card, CardContent } from '@/app/components/ui/card';
import { notificationSettings } from '@/app/lib/queries/notifications';
import { requireUser } from '@/app/lib/session';
import { NotificationsForm } from '@/app/settings/notifications/notifications-form';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Notifications' };

export default async function NotificationsPage() {
  const user = await requireUser('/settings/notifications');
  const { prefs, workspaces } = await notificationSettings(user);
  return (
    <>
      <PageHeader title="Notifications" description="What Tenantry e-mails you about, and how often." />
      <Card>
        <CardContent>
          <NotificationsForm
            frequency={prefs.frequency}
            muted={prefs.muted}
            workspaces={workspaces.map((w) => ({ id: w.id, name: w.name }))}
          />
        </CardContent>
      </Card>
    </>
  );
}
