'use server';
// The invitation page's own action (accepting and declining are in actions/members.ts):
// signing out to switch to the invited account, coming back to the same link.
import { redirect } from 'next/navigation';
import { readStoredSession, services, storeSession, currentUser } from '@/app/lib/session';

export async function signOutFromInvitation(form: FormData) {
  const token = String(form.get('token') ?? '');
  const user = await currentUser();
  if (user && (await readStoredSession())) {
    await services()
      .identity.signOut(user.token, 'local')
      .catch(() => undefined);
  }
  await storeSession(null);
  redirect(`/sign-in?next=${encodeURIComponent(`/invitations/accept?token=${encodeURIComponent(token)}`)}`);
}
