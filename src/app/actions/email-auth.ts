'use server';
// Server actions for the e-mailed flows: asking for a password reset, entering its code, setting
// the new password, sending a sign-in link and code, entering that code, resending a sign-up
// confirmation, and sending a fresh link to a browser that opened one asked for elsewhere.
// Answers never tell whether an address has an account; e-mailed links come back through
// /auth/confirm with a PKCE code (lib/email-links.ts).
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { isHttpError } from '@/server/http/errors';
import { isTokenResponse } from '@/server/identity/flows/context';
import { fieldErrorsOf } from '@/app/lib/actions';
import { requestContext } from '@/app/lib/client';
import { confirmUrl, startEmailFlow } from '@/app/lib/email-links';
import { emailField } from '@/app/lib/fields';
import { flash } from '@/app/lib/flash';
import { submittedValues, type FormState } from '@/app/lib/form-state';
import { currentUser, safeNext, services, storeSession } from '@/app/lib/session';

/** A form whose request went out: the page then says so (and, for a code, asks for it). */
export interface SentState extends FormState {
  sent?: boolean;
}

const emailOnly = z.object({ email: emailField, next: z.string().optional() });

export async function requestPasswordResetAction(_state: SentState, form: FormData): Promise<SentState> {
  const values = submittedValues(form);
  const input = emailOnly.safeParse(Object.fromEntries(form));
  if (!input.success) return { fieldErrors: fieldErrorsOf(input.error), values };
  try {
    await services().identity.recover({
      email: input.data.email,
      pkce: await startEmailFlow(),
      redirectTo: confirmUrl('/reset-password'),
    });
  } catch (error) {
    // Only a wait (429) is worth telling; it is the same for every address.
    return { error: isHttpError(error) ? error.message : 'Could not send the e-mail; try again', values };
  }
  return { sent: true, values };
}

const codeField = z
  .string({ error: 'Enter the code from the e-mail' })
  .trim()
  .regex(/^\d{6,10}$/, 'Enter the 6-digit code from the e-mail');

/**
 * The reset e-mail's code, typed on any device: it proves the mailbox as the link does, without
 * the link's tie to the browser that asked, so a reset asked for on a laptop and read on a phone
 * (or the other way round) still ends in a new password.
 */
export async function verifyRecoveryCodeAction(_state: SentState, form: FormData): Promise<SentState> {
  const values = submittedValues(form);
  const input = z.object({ email: emailField, code: codeField }).safeParse(Object.fromEntries(form));
  if (!input.success) return { sent: true, fieldErrors: fieldErrorsOf(input.error), values };
  let session;
  try {
    session = await services().identity.verifyPost(
      { type: 'recovery', email: input.data.email, token: input.data.code },
      await requestContext(),
    );
  } catch (error) {
    const message = isHttpError(error) ? error.message : 'Could not check the code; try again';
    return { sent: true, fieldErrors: { code: message }, values };
  }
  if (!isTokenResponse(session)) return { sent: true, error: 'That code cannot reset a password', values };
  await storeSession(session);
  redirect('/reset-password');
}

/** What the page for a link opened in another browser shows once a fresh link went out. */
export interface ResentState extends SentState {
  /** which code form follows: the reset's or the sign-in's */
  kind?: 'recovery' | 'magiclink';
}

/**
 * A reset or sign-in link opened in a browser other than the one that asked for it reached
 * /auth/confirm with a code only that other browser can exchange. Here, at the person's request, a
 * fresh link and code go to the same address, with this browser's own verifier, so the link works
 * here and the code works anywhere (the new e-mail's token replaces any unused one).
 */
export async function resendStrandedLinkAction(_state: ResentState, form: FormData): Promise<ResentState> {
  const input = z
    .object({ code: z.string().uuid(), next: z.string().optional() })
    .safeParse(Object.fromEntries(form));
  const expired = 'That link has expired; ask for a new one';
  if (!input.success) return { error: expired };
  const { identity } = services();
  const stranded = await identity.strandedCode(input.data.code);
  if (!stranded?.email) return { error: expired };
  const next = safeNext(input.data.next);
  try {
    if (stranded.authenticationMethod === 'recovery') {
      await identity.recover({
        email: stranded.email,
        pkce: await startEmailFlow(),
        redirectTo: confirmUrl('/reset-password'),
      });
      return { sent: true, kind: 'recovery', values: { email: stranded.email } };
    }
    await identity.signInWithOtp(
      {
        email: stranded.email,
        createUser: false,
        data: {},
        pkce: await startEmailFlow(),
        redirectTo: confirmUrl(next),
      },
      await requestContext(),
    );
    return { sent: true, kind: 'magiclink', values: { email: stranded.email, next } };
  } catch (error) {
    return { error: isHttpError(error) ? error.message : 'Could not send the e-mail; try again' };
  }
}

export async function setNewPasswordAction(_state: FormState, form: FormData): Promise<FormState> {
  const user = await currentUser();
  if (!user) redirect('/forgot-password');
  const input = z
    .object({ password: z.string().min(1, 'Enter a new password').max(1024, 'Use at most 1024 characters') })
    .safeParse(Object.fromEntries(form));
  if (!input.success) return { fieldErrors: fieldErrorsOf(input.error) };
  try {
    // Only a recent recovery session (the reset link's) sets a password without the current
    // one; the service decides, so a session from anywhere else is refused whatever posts here.
    await services().identity.updateCurrentUser(user.token, {
      password: input.data.password,
      requireCurrentPassword: true,
      address: (await requestContext()).ip,
    });
  } catch (error) {
    if (isHttpError(error) && error.code === 'current_password_required') {
      await flash('error', 'Enter your current password to set a new one, or ask for a new reset link');
      redirect('/settings/profile');
    }
    const message = isHttpError(error) ? error.message : 'Could not set the password; try again';
    return { fieldErrors: { password: message } };
  }
  await flash('notice', 'Password set; you are signed in');
  redirect('/workspaces');
}

export async function requestSignInCodeAction(_state: SentState, form: FormData): Promise<SentState> {
  const values = submittedValues(form);
  const input = emailOnly.safeParse(Object.fromEntries(form));
  if (!input.success) return { fieldErrors: fieldErrorsOf(input.error), values };
  try {
    await services().identity.signInWithOtp(
      {
        email: input.data.email,
        createUser: false,
        data: {},
        pkce: await startEmailFlow(),
        redirectTo: confirmUrl(safeNext(input.data.next)),
      },
      await requestContext(),
    );
  } catch (error) {
    // An unknown address (otp_disabled) is answered like a known one: no enumeration.
    if (!(isHttpError(error) && error.code === 'otp_disabled')) {
      return { error: isHttpError(error) ? error.message : 'Could not send the e-mail; try again', values };
    }
  }
  return { sent: true, values };
}

export async function verifySignInCodeAction(_state: SentState, form: FormData): Promise<SentState> {
  const values = submittedValues(form);
  const input = z
    .object({
      email: emailField,
      code: codeField,
      next: z.string().optional(),
    })
    .safeParse(Object.fromEntries(form));
  if (!input.success) return { sent: true, fieldErrors: fieldErrorsOf(input.error), values };
  let session;
  try {
    session = await services().identity.verifyPost(
      { type: 'email', email: input.data.email, token: input.data.code },
      await requestContext(),
    );
  } catch (error) {
    const message = isHttpError(error) ? error.message : 'Could not check the code; try again';
    return { sent: true, fieldErrors: { code: message }, values };
  }
  if (!isTokenResponse(session)) return { sent: true, error: 'That code cannot sign you in', values };
  await storeSession(session);
  redirect(safeNext(input.data.next));
}

export async function resendConfirmationAction(_state: SentState, form: FormData): Promise<SentState> {
  const values = submittedValues(form);
  const input = emailOnly.safeParse(Object.fromEntries(form));
  if (!input.success) return { fieldErrors: fieldErrorsOf(input.error), values };
  try {
    await services().identity.resend({
      type: 'signup',
      email: input.data.email,
      pkce: await startEmailFlow(),
      redirectTo: confirmUrl(safeNext(input.data.next)),
    });
  } catch (error) {
    return { error: isHttpError(error) ? error.message : 'Could not send the e-mail; try again', values };
  }
  return { sent: true, values };
}
