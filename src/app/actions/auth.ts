'use server';
// Server actions for signing up, in and out. Input is validated with a schema; the identity
// service is called in-process; the session goes into HttpOnly cookies; failures come back to the
// form as a clear message (the forms work without client JavaScript).
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { isHttpError } from '@/server/http/errors';
import { requestContext } from '@/app/lib/client';
import { flash } from '@/app/lib/flash';
import {
  localPath,
  readStoredSession,
  safeNext,
  services,
  storeSession,
  currentUser,
} from '@/app/lib/session';

const credentials = z.object({
  email: z
    .string()
    .trim()
    .pipe(z.email({ error: 'Enter a valid e-mail address' })),
  password: z.string().min(1, 'Enter your password').max(1024),
  next: z.string().optional(),
});

/** Back to the form with the refusal, keeping where to go afterwards (when it is a local path). */
async function back(page: string, message: string, next?: string): Promise<never> {
  await flash('error', message);
  const target = localPath(next);
  redirect(target ? `${page}?${new URLSearchParams({ next: target })}` : page);
}

export async function signUpAction(form: FormData) {
  const input = credentials.safeParse(Object.fromEntries(form));
  if (!input.success) return back('/sign-up', input.error.issues[0]!.message);
  const { identity } = services();
  let result: Awaited<ReturnType<typeof identity.signUp>>;
  try {
    result = await identity.signUp(
      { email: input.data.email, password: input.data.password },
      await requestContext(),
    );
  } catch (error) {
    return back(
      '/sign-up',
      isHttpError(error) ? error.message : 'Could not create the account; try again',
      input.data.next,
    );
  }
  if (!('access_token' in result)) {
    await flash('notice', 'Check your e-mail to confirm your account');
    redirect('/sign-in');
  }
  await storeSession(result as never);
  redirect(safeNext(input.data.next));
}

export async function signInAction(form: FormData) {
  const input = credentials.safeParse(Object.fromEntries(form));
  if (!input.success) return back('/sign-in', input.error.issues[0]!.message);
  const { identity } = services();
  let session: Awaited<ReturnType<typeof identity.passwordGrant>>;
  try {
    session = await identity.passwordGrant(input.data.email, input.data.password, await requestContext());
  } catch (error) {
    return back(
      '/sign-in',
      isHttpError(error) ? error.message : 'Could not sign in; try again',
      input.data.next,
    );
  }
  await storeSession(session as never);
  redirect(safeNext(input.data.next));
}

export async function signOutAction() {
  const user = await currentUser();
  const session = await readStoredSession();
  if (user && session) {
    await services()
      .identity.signOut(user.claims as never, 'local')
      .catch(() => undefined);
  }
  await storeSession(null);
  redirect('/sign-in');
}
