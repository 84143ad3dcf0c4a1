// Pending requests to join, on the members page for owners and admins (decision 0095): who asked,
// from which domain, at which role they would join, with Approve and Deny. Shows nothing when
// there are none.
import { Check, X } from 'lucide-react';
import { answerJoinRequestAction } from '@/app/actions/domains';
import { RelativeTime } from '@/app/components/relative-time';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { pendingJoinRequests } from '@/app/lib/queries/domains';
import type { SignedIn } from '@/app/lib/session';
import { count } from '@/server/text/counts';

export async function JoinRequests({
  user,
  workspace,
}: {
  user: SignedIn;
  workspace: { id: string; slug: string };
}) {
  const requests = await pendingJoinRequests(user, workspace.id);
  if (requests.length === 0) return null;
  return (
    <Card aria-labelledby="join-requests" className="mb-6">
      <CardHeader>
        <CardTitle id="join-requests">Requests to join</CardTitle>
        <CardDescription>
          {count(requests.length, 'person', 'people')} asked to join by their domain
        </CardDescription>
      </CardHeader>
      <CardContent className="px-0 sm:px-0">
        <ul aria-label="Requests to join" className="divide-y border-t">
          {requests.map((r) => {
            const who = r.display_name?.trim() || r.email;
            return (
              <li
                key={r.id}
                data-join-request={r.email}
                className="flex flex-wrap items-center gap-x-3 gap-y-2 px-5 py-3 sm:px-6"
              >
                <span className="min-w-48 flex-1">
                  <span className="block truncate text-sm font-medium">{who}</span>
                  <span className="block text-sm text-muted-foreground">
                    {who !== r.email ? `${r.email} · ` : ''}asked <RelativeTime date={r.created_at} /> · would
                    join as {r.role ?? 'member'}
                  </span>
                </span>
                <form action={answerJoinRequestAction} className="flex gap-2">
                  <input type="hidden" name="slug" value={workspace.slug} />
                  <input type="hidden" name="request_id" value={r.id} />
                  <SubmitButton
                    size="sm"
                    name="approve"
                    value="true"
                    pendingText="Saving…"
                    aria-label={`Approve ${who}`}
                  >
                    <Check aria-hidden="true" />
                    Approve
                  </SubmitButton>
                  <SubmitButton
                    size="sm"
                    variant="outline"
                    name="approve"
                    value="false"
                    pendingText="Saving…"
                    aria-label={`Deny ${who}`}
                  >
                    <X aria-hidden="true" />
                    Deny
                  </SubmitButton>
                </form>
              </li>
            );
          })}
        </ul>
      </CardContent>
    </Card>
  );
}
