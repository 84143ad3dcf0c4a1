// The Security page's "Connected apps": the apps the person allowed to use their account through
// the OAuth server (decision 0093), each with its logo, site, what it may see and since when, and
// a Disconnect that asks first; disconnecting ends the app's access at once.
import { Avatar } from '@/app/components/ui/avatar';
import { disconnectAppAction } from '@/app/actions/oauth';
import { ConfirmAction } from '@/app/components/confirm-action';
import { RelativeTime } from '@/app/components/relative-time';
import { Button } from '@/app/components/ui/button';
import type { Grant } from '@/app/lib/queries/oauth';

function hostOf(uri: string): string | null {
  try {
    return new URL(uri).host;
  } catch {
    return null;
  }
}

export function ConnectedApps({ apps }: { apps: Grant[] }) {
  if (apps.length === 0) {
    return <p className="text-sm text-muted-foreground">No apps are connected to your account.</p>;
  }
  return (
    <ul aria-label="Connected apps" className="divide-y rounded-md border">
      {apps.map((app) => {
        const name = app.client.name || 'Unnamed app';
        const site = app.client.uri ? hostOf(app.client.uri) : null;
        return (
          <li
            key={app.client.id}
            data-connected-app={name}
            className="flex flex-wrap items-center gap-x-3 gap-y-2 px-4 py-3"
          >
            <Avatar
              name={name}
              seed={app.client.id}
              src={app.client.logo_uri || null}
              className="rounded-md"
            />
            <span className="min-w-0 flex-1 basis-48">
              <span className="block text-sm font-medium [overflow-wrap:anywhere]">{name}</span>
              <span className="block text-xs text-muted-foreground [overflow-wrap:anywhere]">
                {site ? `${site} · ` : ''}
                {app.scopes.join(', ')} · allowed <RelativeTime date={app.granted_at} />
              </span>
            </span>
            <ConfirmAction
              trigger={
                <Button variant="outline" size="sm" aria-label={`Disconnect ${name}`}>
                  Disconnect
                </Button>
              }
              title={`Disconnect ${name}?`}
              description={`${name} stops working with your account at once. To use it again, you will connect it again from the app.`}
              confirmLabel="Disconnect"
              pendingLabel="Disconnecting…"
              action={disconnectAppAction}
              fields={{ client_id: app.client.id }}
            />
          </li>
        );
      })}
    </ul>
  );
}
