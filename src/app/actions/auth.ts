'use server';
// Server actions for signing up, in and out. Input is validated with a schema; the identity
// service is called in-process; the session goes into HttpOnly cookies. A refusal comes back to
// the form (useActionState) with the e-mail kept and the field or reason named; the forms also
// work without client JavaScript.
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { isHttpError } from '@/server/http/errors';
import { isTokenResponse } from '@/server/identity/flows/context';
import { fieldErrorsOf } from '@/app/lib/actions';
import { requestContext } from '@/app/lib/client';
import { confirmUrl, startEmailFlow } from '@/app/lib/email-links';
import type { SentState } from '@/app/actions/email-auth';
import { emailField } from '@/app/lib/fields';
import { submittedValues, type FormState } from '@/app/lib/form-state';
import {
  readStoredSession,
  safeNext,
  secondStepPath,
  services,
  storeSession,
  currentUser,
  halfSignedInUser,
} from '@/app/lib/session';

const credentials = z.object({
  email: emailField,
  password: z.string().min(1, 'Enter your password').max(1024, 'Use at most 1024 characters'),
  next: z.string().optional(),
});

export async function signUpAction(_state: SentState, form: FormData): Promise<SentState> {
  const values = submittedValues(form);
  const input = credentials.safeParse(Object.fromEntries(form));
  if (!input.success) return { fieldErrors: fieldErrorsOf(input.error), values };
  const { identity } = services();
  let result: Awaited<ReturnType<typeof identity.signUp>>;
  try {
    result = await identity.signUp(
      {
        email: input.data.email,
        password: input.data.password,
        // Without autoconfirm, the confirmation link comes back here and signs the person in.
        pkce: await startEmailFlow(),
        redirectTo: confirmUrl(safeNext(input.data.next)),
      },
      await requestContext(),
    );
  } catch (error) {
    const message = isHttpError(error) ? error.message : 'Could not create the account; try again';
    if (/password/i.test(message)) return { fieldErrors: { password: message }, values };
    return { error: message, values };
  }
  // The form then says "check your e-mail" and offers to send the link again.
  if (!isTokenResponse(result)) return { sent: true, values };
  await storeSession(result);
  redirect(safeNext(input.data.next));
}

export async function signInAction(_state: FormState, form: FormData): Promise<FormState> {
  const values = submittedValues(form);
  const input = credentials.safeParse(Object.fromEntries(form));
  if (!input.success) return { fieldErrors: fieldErrorsOf(input.error), values };
  const { identity } = services();
  let session: Awaited<ReturnType<typeof identity.passwordGrant>>;
  try {
    session = await identity.passwordGrant(input.data.email, input.data.password, await requestContext());
  } catch (error) {
    return { error: isHttpError(error) ? error.message : 'Could not sign in; try again', values };
  }
  await storeSession(session);
  // Whoever set up an authenticator app gives its code next (the session is at aal1 until then).
  const factors = (session.user.factors ?? []) as { status?: string }[];
  if (factors.some((f) => f.status === 'verified')) redirect(secondStepPath(safeNext(input.data.next)));
  redirect(safeNext(input.data.next));
}

export async function signOutAction() {
  const user = (await currentUser()) ?? (await halfSignedInUser());
  const session = await readStoredSession();
  if (user && session) {
    await services()
      .identity.signOut(user.token, 'local')
      .catch(() => undefined);
  }
  await storeSession(null);
  redirect('/sign-in');
}
