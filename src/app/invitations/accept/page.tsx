// Where an invitation e-mail's link lands. The token is checked as the page opens: an open
// invitation shows the workspace, who invited, the role and the address before anyone acts; a
// used, revoked, declined, expired or replaced link says so, with nothing to accept. Signed out:
// create an account (the invited address filled in) or sign in, then come back here.
import { CircleAlert, MailCheck } from 'lucide-react';
import Link from 'next/link';
import type { ReactNode } from 'react';
import { acceptInvitationAction, declineInvitationAction } from '@/app/actions/members';
import { signOutFromInvitation } from '@/app/invitations/accept/actions';
import { RelativeTime } from '@/app/components/relative-time';
import { Badge } from '@/app/components/ui/badge';
import { Button } from '@/app/components/ui/button';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { invitationPreview, type InvitationState } from '@/app/lib/queries/invitations';
import { currentUser } from '@/app/lib/session';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Invitation' };

const CLOSED: Record<Exclude<InvitationState, 'pending'>, { title: string; text: string }> = {
  accepted: {
    title: 'This invitation has already been used',
    text: 'Each invitation link works once. If it was you, the workspace is in your list.',
  },
  revoked: {
    title: 'This invitation was revoked',
    text: 'Ask the person who invited you for a new invitation.',
  },
  declined: {
    title: 'This invitation was declined',
    text: 'Ask the person who invited you for a new invitation.',
  },
  expired: { title: 'This invitation has expired', text: 'Invitations last 7 days. Ask for a new one.' },
  superseded: {
    title: 'This link was replaced by a newer one',
    text: 'The invitation was sent again with a new link. Open the latest invitation e-mail.',
  },
};

function Panel({ icon, title, children }: { icon: ReactNode; title: string; children: ReactNode }) {
  return (
    <div className="mx-auto max-w-lg rounded-lg border bg-card p-6 shadow-xs sm:p-8">
      <div className="mb-4 inline-flex size-10 items-center justify-center rounded-full bg-muted">{icon}</div>
      <h1 className="text-xl font-semibold tracking-tight">{title}</h1>
      <div className="mt-2 grid gap-4 text-sm text-muted-foreground">{children}</div>
    </div>
  );
}

export default async function AcceptInvitationPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { token: raw } = await searchParams;
  const token = typeof raw === 'string' ? raw : '';
  const [user, invitation] = await Promise.all([currentUser(), token ? invitationPreview(token) : null]);
  const here = `/invitations/accept?token=${encodeURIComponent(token)}`;
  const alertIcon = <CircleAlert className="size-5 text-muted-foreground" aria-hidden="true" />;
  const home = (
    <Button asChild variant="outline" className="justify-self-start">
      <Link href={user ? '/workspaces' : '/'}>{user ? 'Go to your workspaces' : 'Back to the start'}</Link>
    </Button>
  );

  if (!invitation) {
    return (
      <Panel icon={alertIcon} title="This invitation link is not valid">
        <p data-invitation-state="invalid">
          {token
            ? 'The link may be incomplete or mistyped. Open it again from the invitation e-mail.'
            : 'This link is incomplete: open it from the invitation e-mail.'}
        </p>
        {home}
      </Panel>
    );
  }
  if (invitation.state !== 'pending') {
    const closed = CLOSED[invitation.state];
    return (
      <Panel icon={alertIcon} title={closed.title}>
        <p data-invitation-state={invitation.state}>
          {closed.text}
          {invitation.inviterName && invitation.state !== 'accepted'
            ? ` (${invitation.inviterName} sent it.)`
            : ''}
        </p>
        {home}
      </Panel>
    );
  }

  const intro = (
    <p data-invitation-state="pending">
      <strong className="text-foreground">{invitation.inviterName ?? 'Someone'}</strong> invited{' '}
      <strong className="text-foreground">{invitation.email}</strong> to join as{' '}
      <Badge className="capitalize">{invitation.role}</Badge>. The link expires{' '}
      <RelativeTime date={invitation.expiresAt} />.
    </p>
  );
  const title = `Join ${invitation.workspaceName}`;
  const icon = <MailCheck className="size-5 text-primary" aria-hidden="true" />;

  if (!user) {
    const next = encodeURIComponent(here);
    return (
      <Panel icon={icon} title={title}>
        {intro}
        <p>
          Create an account with {invitation.email}, or sign in if you have one; you come back here after.
        </p>
        <div className="flex flex-col gap-2 sm:flex-row">
          <Button asChild>
            <Link href={`/sign-up?next=${next}&email=${encodeURIComponent(invitation.email)}`}>
              Create an account
            </Link>
          </Button>
          <Button asChild variant="outline">
            <Link href={`/sign-in?next=${next}`}>Sign in</Link>
          </Button>
        </div>
      </Panel>
    );
  }

  if (user.email.toLowerCase() !== invitation.email) {
    return (
      <Panel icon={icon} title={title}>
        {intro}
        <p
          role="note"
          className="rounded-md border bg-muted px-3 py-2 text-foreground"
          data-invitation-state="wrong-account"
        >
          You are signed in as {user.email}, but this invitation is for {invitation.email}. Sign out and sign
          in with that address to accept it.
        </p>
        <form action={signOutFromInvitation}>
          <input type="hidden" name="token" value={token} />
          <SubmitButton variant="outline" pendingText="Signing out…">
            Sign out and switch account
          </SubmitButton>
        </form>
      </Panel>
    );
  }

  return (
    <Panel icon={icon} title={title}>
      {intro}
      <div className="flex flex-col gap-2 sm:flex-row">
        <form action={acceptInvitationAction}>
          <input type="hidden" name="token" value={token} />
          <SubmitButton pendingText="Joining…" className="w-full">
            Accept invitation
          </SubmitButton>
        </form>
        <form action={declineInvitationAction}>
          <input type="hidden" name="token" value={token} />
          <SubmitButton variant="outline" pendingText="Declining…" className="w-full">
            Decline
          </SubmitButton>
        </form>
      </div>
    </Panel>
  );
}
