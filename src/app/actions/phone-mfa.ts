'use server';
// Server actions for a phone as the second step: adding one on the Security page (the number, a
// code texted to it, the code typed back: the session rises to aal2 and recovery codes are shown
// once) and, at sign-in, texting a code to the phone and checking it. The identity service does
// the work (flows/mfa-phone.ts); the new session goes into the cookies.
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { requestContext } from '@/app/lib/client';
import { idField } from '@/app/lib/fields';
import type { FormState } from '@/app/lib/form-state';
import {
  currentUser,
  halfSignedInUser,
  safeNext,
  services,
  signedInOrSignIn,
  storeSession,
} from '@/app/lib/session';
import { verifyAccessToken } from '@/server/identity/access-tokens';
import { isHttpError } from '@/server/http/errors';

const SECURITY = '/settings/security';

export interface PhoneEnrolState extends FormState {
  /** the factor being added and the challenge whose code was texted */
  pending?: { factorId: string; challengeId: string; phone: string };
  recoveryCodes?: string[];
}

export interface PhoneStepState extends FormState {
  /** the challenge whose code was texted, and the end of the number it went to */
  challenge?: { id: string; endsWith: string };
}

const smsCode = z
  .string({ error: 'Enter the 6-digit code we texted you' })
  .transform((v) => v.replace(/\s/g, ''))
  .pipe(z.string().regex(/^[0-9]{6,10}$/, 'Enter the 6-digit code we texted you'));

/** The identity service's refusals in words for the page. */
function refusal(error: unknown, fallback: string): PhoneEnrolState {
  if (!isHttpError(error)) return { error: fallback };
  switch (error.code) {
    case 'validation_failed':
      return { fieldErrors: { phone: 'Enter the number with its country code, like +44 7700 900123' } };
    case 'mfa_verification_failed':
      return { fieldErrors: { code: 'That code is not right; check the text message and try again' } };
    case 'mfa_challenge_expired':
      return { fieldErrors: { code: 'That code has expired; send a new one' } };
    case 'mfa_verified_factor_exists':
      return { fieldErrors: { phone: 'This phone is already your second step' } };
    case 'over_sms_send_rate_limit':
      return { error: 'A code was sent moments ago; wait a little before asking for another' };
    case 'sms_send_failed':
      return { error: 'The text message could not be sent; check the number or try again later' };
    default:
      return { error: error.message };
  }
}

/** Step 1: the number becomes an unverified factor and a code is texted to it. */
export async function startPhoneEnrolmentAction(
  _state: PhoneEnrolState,
  form: FormData,
): Promise<PhoneEnrolState> {
  const user = await signedInOrSignIn(SECURITY);
  const phone = String(form.get('phone') ?? '').trim();
  if (!phone) return { fieldErrors: { phone: 'Enter your mobile number' }, values: { phone } };
  const { identity } = services();
  const { ip } = await requestContext();
  try {
    const factor = await identity.enrollFactor(user.token, { factorType: 'phone', phone });
    const challenge = await identity.challengeFactor(user.token, factor.id, ip);
    return {
      pending: {
        factorId: factor.id,
        challengeId: challenge.id,
        phone: `+${'phone' in factor ? factor.phone : ''}`,
      },
    };
  } catch (error) {
    return { ...refusal(error, 'Could not send the code; try again'), values: { phone } };
  }
}

/** Step 2: the texted code turns the phone on as the second step; recovery codes are made. */
export async function confirmPhoneEnrolmentAction(
  state: PhoneEnrolState,
  form: FormData,
): Promise<PhoneEnrolState> {
  const user = await signedInOrSignIn(SECURITY);
  const factorId = idField.safeParse(form.get('factor_id'));
  const challengeId = idField.safeParse(form.get('challenge_id'));
  if (!factorId.success || !challengeId.success)
    return { error: 'This page is out of date; reload it and start again' };
  const code = smsCode.safeParse(form.get('code') ?? '');
  if (!code.success) return { ...state, fieldErrors: { code: code.error.issues[0]!.message } };
  const { identity, signer } = services();
  const { ip } = await requestContext();
  try {
    const session = await identity.verifyFactor(user.token, factorId.data, {
      challengeId: challengeId.data,
      code: code.data,
      ip,
    });
    await storeSession(session);
    const claims = await verifyAccessToken(signer, session.access_token);
    return { recoveryCodes: await identity.regenerateRecoveryCodes(claims) };
  } catch (error) {
    return { ...state, ...refusal(error, 'Could not check the code; try again') };
  }
}

/** At sign-in: texts a code to the account's phone factor. */
export async function sendPhoneStepCodeAction(
  _state: PhoneStepState,
  _form: FormData,
): Promise<PhoneStepState> {
  const user = await halfSignedInUser();
  if (!user) redirect('/sign-in');
  const { identity } = services();
  const { factors } = await identity.factorsOf(user.userId);
  const factor = factors.find((f) => f.status === 'verified' && f.factor_type === 'phone');
  if (!factor) return { error: 'No phone is set up as your second step' };
  try {
    const challenge = await identity.challengeFactor(user.token, factor.id, (await requestContext()).ip);
    const phone = typeof factor.phone === 'string' ? factor.phone : '';
    return { challenge: { id: challenge.id, endsWith: phone.slice(-2) } };
  } catch (error) {
    return refusal(error, 'Could not send the code; try again');
  }
}

/** At sign-in: the texted code completes the second step. */
export async function phoneStepAction(state: PhoneStepState, form: FormData): Promise<PhoneStepState> {
  const next = safeNext(typeof form.get('next') === 'string' ? String(form.get('next')) : null);
  const user = await halfSignedInUser();
  if (!user) redirect((await currentUser()) ? next : '/sign-in');
  const challengeId = idField.safeParse(form.get('challenge_id'));
  if (!challengeId.success) return { error: 'Send a code first' };
  const code = smsCode.safeParse(form.get('code') ?? '');
  if (!code.success) return { ...state, fieldErrors: { code: code.error.issues[0]!.message } };
  const { identity } = services();
  const { factors } = await identity.factorsOf(user.userId);
  const factor = factors.find((f) => f.status === 'verified' && f.factor_type === 'phone');
  if (!factor) redirect(next);
  try {
    const session = await identity.verifyFactor(user.token, factor.id, {
      challengeId: challengeId.data,
      code: code.data,
      ip: (await requestContext()).ip,
    });
    await storeSession(session);
  } catch (error) {
    return { ...state, ...refusal(error, 'Could not check the code; try again') };
  }
  redirect(next);
}
