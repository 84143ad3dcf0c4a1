// The Security page's "Where you are signed in": each session with the browser and system it was
// opened from, its address, when it was opened and last renewed; this one marked, the others each
// with a sign-out, and one button for all of them.
import { Laptop } from 'lucide-react';
import { endOtherSessionsAction, endSessionAction } from '@/app/actions/sessions';
import { ConfirmAction } from '@/app/components/confirm-action';
import { RelativeTime } from '@/app/components/relative-time';
import { Badge } from '@/app/components/ui/badge';
import { Button } from '@/app/components/ui/button';
import { SubmitButton } from '@/app/components/ui/submit-button';
import type { OwnSession } from '@/server/identity/flows/own-sessions';

export function SessionsList({ sessions, total }: { sessions: OwnSession[]; total: number }) {
  const others = total - sessions.filter((s) => s.current).length;
  return (
    <div className="grid gap-4">
      <ul aria-label="Sessions" className="divide-y rounded-md border">
        {sessions.map((session) => (
          <li
            key={session.id}
            data-session={session.current ? 'current' : 'other'}
            className="flex flex-wrap items-center gap-x-3 gap-y-2 px-4 py-3"
          >
            <span className="inline-flex size-8 shrink-0 items-center justify-center rounded-full bg-muted">
              <Laptop className="size-4 text-muted-foreground" aria-hidden="true" />
            </span>
            <span className="min-w-0 flex-1 basis-48">
              <span className="flex flex-wrap items-center gap-2 text-sm font-medium">
                <span className="[overflow-wrap:anywhere]">{session.device ?? 'Unknown browser'}</span>
                {session.current ? <Badge>This browser</Badge> : null}
                {session.aal === 'aal2' ? <Badge variant="outline">Two-step verified</Badge> : null}
              </span>
              <span className="block text-xs text-muted-foreground">
                {session.ip ? `${session.ip} · ` : ''}signed in <RelativeTime date={session.createdAt} /> ·
                last active <RelativeTime date={session.lastUsedAt} />
              </span>
            </span>
            {session.current ? null : (
              <form action={endSessionAction}>
                <input type="hidden" name="session_id" value={session.id} />
                <SubmitButton
                  variant="outline"
                  size="sm"
                  pendingText="Signing out…"
                  aria-label={`Sign out ${session.device ?? 'the unknown browser'}${session.ip ? ` at ${session.ip}` : ''}`}
                >
                  Sign out
                </SubmitButton>
              </form>
            )}
          </li>
        ))}
      </ul>
      {total > sessions.length ? (
        <p className="text-sm text-muted-foreground">
          And {total - sessions.length} older {total - sessions.length === 1 ? 'session' : 'sessions'}.
        </p>
      ) : null}
      {others > 0 ? (
        <div>
          <ConfirmAction
            trigger={<Button variant="outline">Sign out all other sessions</Button>}
            title="Sign out everywhere else?"
            description={`${others} other ${others === 1 ? 'session is' : 'sessions are'} signed out at once; this browser stays signed in.`}
            confirmLabel="Sign out other sessions"
            pendingLabel="Signing out…"
            action={endOtherSessionsAction}
            fields={{}}
          />
        </div>
      ) : (
        <p className="text-sm text-muted-foreground">You are signed in nowhere else.</p>
      )}
    </div>
  );
}
