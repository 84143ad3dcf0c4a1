// Where an invitation e-mail's link lands. Signed out: sign in or create an account, then come
// back here. Signed in: accept or decline; expired, revoked and wrong-account links say so.
import Link from 'next/link';
import { acceptInvitationAction, declineInvitationAction } from '@/app/actions/members';
import { Flash } from '@/app/components/flash';
import { currentUser } from '@/app/lib/session';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Invitation' };

export default async function AcceptInvitationPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | undefined>>;
}) {
  const { token = '' } = await searchParams;
  const user = await currentUser();
  const here = `/invitations/accept?token=${encodeURIComponent(token)}`;
  return (
    <section className="card" style={{ maxWidth: '32rem' }}>
      <h1>You are invited to a workspace</h1>
      <Flash />
      {!token ? <p className="error">This link is incomplete: open it from the invitation e-mail.</p> : null}
      {user ? (
        <>
          <p>Signed in as {user.email}. The invitation must be addressed to this e-mail.</p>
          <form action={acceptInvitationAction} className="inline">
            <input type="hidden" name="token" value={token} />
            <button type="submit" className="button">
              Accept invitation
            </button>
          </form>{' '}
          <form action={declineInvitationAction} className="inline">
            <input type="hidden" name="token" value={token} />
            <button type="submit" className="button secondary">
              Decline
            </button>
          </form>
        </>
      ) : (
        <p>
          <Link className="button" href={`/sign-up?next=${encodeURIComponent(here)}`}>
            Create an account
          </Link>{' '}
          <Link className="button secondary" href={`/sign-in?next=${encodeURIComponent(here)}`}>
            Sign in
          </Link>
        </p>
      )}
    </section>
  );
}
