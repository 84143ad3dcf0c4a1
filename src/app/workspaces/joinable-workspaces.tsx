// "Workspaces you can join" on the workspaces page (decision 0095): workspaces whose verified
// domain is the one of the signed-in person's confirmed address, with one-click join or a request
// (and its state: waiting, approved, declined). Shows nothing when there are none.
import { LogIn, Send, X } from 'lucide-react';
import { cancelJoinRequestAction, joinWorkspaceAction, requestToJoinAction } from '@/app/actions/domains';
import { Badge } from '@/app/components/ui/badge';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { joinableWorkspaces } from '@/app/lib/queries/domains';
import type { SignedIn } from '@/app/lib/session';
import { count } from '@/server/text/counts';

export async function JoinableWorkspaces({ user }: { user: SignedIn }) {
  const joinable = await joinableWorkspaces(user);
  if (joinable.length === 0) return null;
  return (
    <section aria-labelledby="joinable-title" className="mb-8 rounded-lg border bg-card">
      <div className="px-5 pt-4 pb-2">
        <h2 id="joinable-title" className="font-semibold">
          Workspaces you can join
        </h2>
        <p className="text-sm text-muted-foreground">Open to people with an address on your domain.</p>
      </div>
      <ul aria-label="Workspaces you can join" className="divide-y border-t">
        {joinable.map((w) => {
          const pending = w.request?.status === 'pending';
          const declined = w.request?.status === 'denied';
          return (
            <li
              key={w.workspace_id}
              data-joinable={w.name}
              className="flex flex-wrap items-center gap-x-3 gap-y-2 px-5 py-3"
            >
              <span className="min-w-48 flex-1">
                <span className="flex flex-wrap items-center gap-2 text-sm font-medium">
                  <span className="truncate">{w.name}</span>
                  {pending ? <Badge variant="warning">waiting for approval</Badge> : null}
                  {declined ? <Badge variant="danger">request declined</Badge> : null}
                </span>
                <span className="block text-sm text-muted-foreground">
                  {w.domain} · {count(w.members, 'member')} · you join as {w.join_role}
                </span>
              </span>
              {w.policy === 'auto_join' ? (
                <form action={joinWorkspaceAction}>
                  <input type="hidden" name="workspace_id" value={w.workspace_id} />
                  <SubmitButton size="sm" pendingText="Joining…" aria-label={`Join ${w.name}`}>
                    <LogIn aria-hidden="true" />
                    Join
                  </SubmitButton>
                </form>
              ) : pending ? (
                <form action={cancelJoinRequestAction}>
                  <input type="hidden" name="request_id" value={w.request!.id} />
                  <SubmitButton
                    size="sm"
                    variant="ghost"
                    pendingText="Withdrawing…"
                    aria-label={`Withdraw the request to join ${w.name}`}
                  >
                    <X aria-hidden="true" />
                    Withdraw
                  </SubmitButton>
                </form>
              ) : (
                <form action={requestToJoinAction}>
                  <input type="hidden" name="workspace_id" value={w.workspace_id} />
                  <SubmitButton
                    size="sm"
                    variant="outline"
                    pendingText="Sending…"
                    aria-label={`Ask to join ${w.name}`}
                  >
                    <Send aria-hidden="true" />
                    Ask to join
                  </SubmitButton>
                </form>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
