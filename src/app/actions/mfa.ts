'use server';
// Server actions for two-step verification: setting up an authenticator app (enrol, then confirm
// with a code; the session rises to aal2 and ten recovery codes are shown once), new recovery
// codes, removing the app, the second step at sign-in (a code from the app or a recovery code),
// and a workspace's "require two-step verification" setting. The identity service does the work;
// the new session goes into the cookies.
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { runForm } from '@/app/lib/actions';
import { requestContext } from '@/app/lib/client';
import { idField, slugField } from '@/app/lib/fields';
import { flash } from '@/app/lib/flash';
import type { FormState } from '@/app/lib/form-state';
import {
  currentUser,
  halfSignedInUser,
  readStoredSession,
  safeNext,
  services,
  signedInOrSignIn,
  storeSession,
} from '@/app/lib/session';
import { verifyAccessToken } from '@/server/identity/access-tokens';
import { isHttpError } from '@/server/http/errors';

const SECURITY = '/settings/security';

export interface EnrolState extends FormState {
  enrolment?: { factorId: string; qrCode: string; secret: string; uri: string };
  /** shown once, right after they are made */
  recoveryCodes?: string[];
}

const totpCode = z
  .string({ error: 'Enter the 6-digit code from your authenticator app' })
  .transform((v) => v.replace(/\s/g, ''))
  .pipe(z.string().regex(/^[0-9]{6}$/, 'Enter the 6-digit code from your authenticator app'));

/** A refusal of the identity service in words for the page. */
function codeRefusal(error: unknown): { field?: string; message: string } {
  if (!isHttpError(error)) return { message: 'Could not check the code; try again' };
  switch (error.code) {
    case 'mfa_verification_failed':
      return { field: 'code', message: 'That code is not right, or was already used; enter the next one' };
    case 'mfa_challenge_expired':
      return { field: 'code', message: 'That took too long; enter the current code again' };
    default:
      return { message: error.message };
  }
}

/** Step 1 of setting up: a new, unverified factor with its QR code and secret. */
export async function startEnrolmentAction(_state: EnrolState, _form: FormData): Promise<EnrolState> {
  const user = await signedInOrSignIn(SECURITY);
  try {
    const factor = await services().identity.enrollFactor(user.token, { factorType: 'totp' });
    const totp = 'totp' in factor ? factor.totp : undefined;
    if (!totp) throw new Error('a TOTP enrolment answers its secret');
    return {
      enrolment: {
        factorId: factor.id,
        qrCode: `data:image/svg+xml;base64,${Buffer.from(totp.qr_code).toString('base64')}`,
        secret: totp.secret,
        uri: totp.uri,
      },
    };
  } catch (error) {
    return { error: isHttpError(error) ? error.message : 'Could not start the set-up; try again' };
  }
}

/** Step 2: the first code confirms the app; the session is now at aal2 and recovery codes are made. */
export async function confirmEnrolmentAction(_state: EnrolState, form: FormData): Promise<EnrolState> {
  const user = await signedInOrSignIn(SECURITY);
  // The form's factor id is only a reference: the service finds it among this user's factors.
  const factorId = idField.safeParse(form.get('factor_id'));
  if (!factorId.success) return { error: 'This page is out of date; reload it and start again' };
  const code = totpCode.safeParse(form.get('code') ?? '');
  if (!code.success) return { fieldErrors: { code: code.error.issues[0]!.message } };
  const { identity, signer } = services();
  const { ip } = await requestContext();
  try {
    const challenge = await identity.challengeFactor(user.token, factorId.data, ip);
    const session = await identity.verifyFactor(user.token, factorId.data, {
      challengeId: challenge.id,
      code: code.data,
      ip,
    });
    await storeSession(session);
    const claims = await verifyAccessToken(signer, session.access_token);
    return { recoveryCodes: await identity.regenerateRecoveryCodes(claims) };
  } catch (error) {
    const refusal = codeRefusal(error);
    return refusal.field ? { fieldErrors: { [refusal.field]: refusal.message } } : { error: refusal.message };
  }
}

/** New recovery codes (the old ones stop working), shown once. */
export async function newRecoveryCodesAction(_state: EnrolState, _form: FormData): Promise<EnrolState> {
  const user = await signedInOrSignIn(SECURITY);
  try {
    return { recoveryCodes: await services().identity.regenerateRecoveryCodes(user.token) };
  } catch (error) {
    return { error: isHttpError(error) ? error.message : 'Could not make new codes; try again' };
  }
}

/** Removes the authenticator app; the session's next tokens say aal1 again. */
export async function removeFactorAction(form: FormData): Promise<never> {
  const user = await signedInOrSignIn(SECURITY);
  const factorId = idField.safeParse(form.get('factor_id'));
  if (!factorId.success) {
    await flash('error', 'This page is out of date; reload it and try again');
    redirect(SECURITY);
  }
  const { identity } = services();
  try {
    await identity.unenrollFactor(user.token, factorId.data);
    const stored = await readStoredSession();
    if (stored) await storeSession(await identity.refreshGrant(stored.refresh_token, await requestContext()));
  } catch (error) {
    await flash('error', isHttpError(error) ? error.message : 'Could not remove it; try again');
    redirect(SECURITY);
  }
  await flash('notice', 'Two-step verification is off');
  redirect(SECURITY);
}

/**
 * Abandons a set-up that was started but not confirmed: the unverified factor goes, so starting
 * again begins clean. The page forgets the QR code itself; nothing is said unless it fails.
 */
export async function cancelEnrolmentAction(form: FormData): Promise<void> {
  const user = await signedInOrSignIn(SECURITY);
  const factorId = idField.safeParse(form.get('factor_id'));
  if (!factorId.success) return;
  await services()
    .identity.unenrollFactor(user.token, factorId.data)
    .catch(() => undefined);
}

/** The second step at sign-in: a code from the app, or one of the recovery codes. */
export async function secondStepAction(_state: FormState, form: FormData): Promise<FormState> {
  const next = safeNext(typeof form.get('next') === 'string' ? String(form.get('next')) : null);
  const user = await halfSignedInUser();
  if (!user) redirect((await currentUser()) ? next : '/sign-in');
  const method = form.get('method') === 'recovery' ? 'recovery' : 'totp';
  const { identity } = services();
  const { ip } = await requestContext();
  let session;
  try {
    if (method === 'recovery') {
      const code = String(form.get('code') ?? '').trim();
      if (!/^[a-z0-9]{5}-?[a-z0-9]{5}$/i.test(code)) {
        return { fieldErrors: { code: 'Enter one of your recovery codes, like abcde-12345' } };
      }
      session = await identity.verifyRecoveryCode(user.token, code);
    } else {
      const code = totpCode.safeParse(form.get('code') ?? '');
      if (!code.success) return { fieldErrors: { code: code.error.issues[0]!.message } };
      const { factors } = await identity.factorsOf(user.userId);
      const factor = factors.find((f) => f.status === 'verified');
      if (!factor) redirect(next);
      const challenge = await identity.challengeFactor(user.token, factor.id, ip);
      session = await identity.verifyFactor(user.token, factor.id, {
        challengeId: challenge.id,
        code: code.data,
        ip,
      });
    }
  } catch (error) {
    if (isHttpError(error) && error.code === 'mfa_verification_failed' && method === 'recovery') {
      return { fieldErrors: { code: 'That is not one of your unused recovery codes' } };
    }
    const refusal = codeRefusal(error);
    return refusal.field ? { fieldErrors: { [refusal.field]: refusal.message } } : { error: refusal.message };
  }
  await storeSession(session);
  if (method === 'recovery') {
    const left = await identity.factorsOf(user.userId);
    await flash(
      'notice',
      `Signed in with a recovery code; ${left.recoveryCodesLeft} left. Make new ones in Security settings if you are running low.`,
    );
  }
  redirect(next);
}

/** A workspace's "require two-step verification" setting (admins and owners at aal2). */
export async function requireMfaAction(_state: FormState, form: FormData): Promise<FormState> {
  const schema = z.object({
    slug: slugField,
    workspace_id: idField,
    require_mfa: z.enum(['on', 'off'], { error: 'This page is out of date; reload it and try again' }),
  });
  const back = `/w/${String(form.get('slug') ?? '')}/settings`;
  return runForm(back, form, schema, async (tx, i) => {
    const on = i.require_mfa === 'on';
    const r = await tx.query('update public.workspaces set require_mfa = $2 where id = $1', [
      i.workspace_id,
      on,
    ]);
    if (r.rowCount === 0)
      throw Object.assign(new Error('Only admins and owners change workspace settings'), { code: '42501' });
    return {
      notice: on
        ? 'Members now need two-step verification here'
        : 'Two-step verification is no longer required',
    };
  });
}
