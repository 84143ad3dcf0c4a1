'use server';
// Server actions for the Security page's list of sessions: signing out one other session, or
// every session but this one. The identity service ends them (their tokens stop at once); the
// outcome comes back as a toast on the same page.
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { flash } from '@/app/lib/flash';
import { currentUser, services } from '@/app/lib/session';

const SECURITY = '/settings/security';

export async function endSessionAction(form: FormData): Promise<void> {
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${SECURITY}`);
  const input = z.object({ session_id: z.string().uuid() }).safeParse(Object.fromEntries(form));
  const ended = input.success && (await services().identity.endOwnSession(user.token, input.data.session_id));
  await flash(
    ended ? 'notice' : 'error',
    ended ? 'Signed out of that session' : 'That session has already ended',
  );
  redirect(SECURITY);
}

export async function endOtherSessionsAction(): Promise<void> {
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${SECURITY}`);
  await services().identity.signOut(user.token, 'others');
  await flash('notice', 'Signed out everywhere else; this session stays signed in');
  redirect(SECURITY);
}
