// Setting a new password after following a reset link: the link has already signed the person
// in (a recovery session, which needs no current password while it is recent); without a
// session, back to the request form. Any other session (signed in with a password, or a reset
// link's session past RECOVERY_SESSION_WINDOW) goes to the profile page, whose form asks for the
// current password: whoever finds a signed-in screen must not set a new password without it.
// Whoever set up two-step verification passes it first: the link proves the mailbox only, and
// the identity service changes a password from such a session only at aal2.
import { redirect } from 'next/navigation';
import { NewPasswordForm } from '@/app/reset-password/new-password-form';
import { currentUser, halfSignedInUser, secondStepPath } from '@/app/lib/session';
import { isRecentRecovery } from '@/server/identity/flows/user';
import { getRuntime } from '@/server/runtime';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Set a new password' };

export default async function ResetPasswordPage() {
  if (await halfSignedInUser()) redirect(secondStepPath('/reset-password'));
  const user = await currentUser();
  if (!user) redirect('/forgot-password');
  const { config } = getRuntime();
  if (!isRecentRecovery(user.token, config.identity.recoverySessionSeconds)) redirect('/settings/profile');
  return (
    <>
      <div className="mb-8 text-center">
        <h1 className="text-2xl font-semibold tracking-tight">Set a new password</h1>
        <p className="mt-2 text-sm text-muted-foreground">For {user.email}.</p>
      </div>
      <div className="rounded-lg border bg-card p-6 shadow-xs">
        <NewPasswordForm minLength={config.minPasswordLength} />
      </div>
    </>
  );
}
