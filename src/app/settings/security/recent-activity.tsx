// The Security page's "Recent security activity": the account's latest sign-ins (and failed
// ones), password, e-mail, two-step and passkey changes and sessions ended, each with when and
// the address and browser it came from, read from the security audit log.
import { RelativeTime } from '@/app/components/relative-time';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { describeAudit, recentSecurityEvents } from '@/app/lib/queries/audit';
import type { SignedIn } from '@/app/lib/session';

export async function RecentSecurityActivity({ user }: { user: SignedIn }) {
  const events = await recentSecurityEvents(user, 10);
  return (
    <Card aria-labelledby="recent-security-activity">
      <CardHeader>
        <CardTitle id="recent-security-activity">Recent security activity</CardTitle>
        <CardDescription>
          If you do not recognise something here, change your password and sign out everywhere.
        </CardDescription>
      </CardHeader>
      <CardContent>
        {events.length === 0 ? (
          <p className="text-sm text-muted-foreground">Nothing yet.</p>
        ) : (
          <ul aria-label="Recent security activity" className="divide-y rounded-md border">
            {events.map((event) => (
              <li
                key={event.id}
                data-action={event.action}
                className="flex flex-wrap gap-x-3 gap-y-1 px-4 py-3 text-sm"
              >
                <span className="min-w-0 flex-1 basis-48 font-medium">{describeAudit(event)}</span>
                <span className="text-muted-foreground">
                  {event.ipAddress ?? 'unknown address'}
                  {event.userAgent ? ` · ${event.userAgent.slice(0, 80)}` : ''}
                </span>
                <RelativeTime date={event.createdAt} className="text-muted-foreground" />
              </li>
            ))}
          </ul>
        )}
      </CardContent>
    </Card>
  );
}
