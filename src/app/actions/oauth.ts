'use server';
// Server actions for the OAuth 2.1 server's pages: the consent page's Allow and Deny (the browser
// then goes back to the app that asked, with a code or with access_denied), and disconnecting a
// connected app from the Security page, whose access ends at once.
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { flash } from '@/app/lib/flash';
import type { FormState } from '@/app/lib/form-state';
import { answerConsent, disconnectApp } from '@/app/lib/queries/oauth';
import { currentUser } from '@/app/lib/session';

const SECURITY = '/settings/security';

const consentForm = z.object({
  authorization_id: z.string().uuid('This request is not valid'),
  decision: z.enum(['approve', 'deny'], { error: 'Choose Allow or Deny' }),
});

export async function answerConsentAction(_state: FormState, form: FormData): Promise<FormState> {
  const input = consentForm.safeParse(Object.fromEntries(form));
  const back = input.success
    ? `/oauth/consent?authorization_id=${input.data.authorization_id}`
    : '/oauth/consent';
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(back)}`);
  if (!input.success) return { error: input.error.issues[0]?.message ?? 'This request is not valid' };
  const destination = await answerConsent(user, input.data.authorization_id, input.data.decision);
  if (!destination) {
    return { error: 'This request has expired or was already answered. Start again from the app.' };
  }
  // the app's own redirect URI, registered by the operator and matched exactly when the request came
  redirect(destination);
}

const disconnectForm = z.object({ client_id: z.string().uuid('That app is not valid') });

export async function disconnectAppAction(form: FormData): Promise<void> {
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${SECURITY}`);
  const input = disconnectForm.safeParse(Object.fromEntries(form));
  const done = input.success && (await disconnectApp(user, input.data.client_id));
  await flash(
    done ? 'notice' : 'error',
    done ? 'App disconnected; it can no longer use your account' : 'That app was not connected',
  );
  redirect(SECURITY);
}
