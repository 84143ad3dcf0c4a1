'use server';
// Server actions for signing in with a phone: a code texted to the number (never creating an
// account, and the same answer whether or not the number has one), then the code typed back
// (verify type sms), which signs in. The identity service does the work (flows/phone.ts).
import { redirect } from 'next/navigation';
import { isHttpError } from '@/server/http/errors';
import { isTokenResponse } from '@/server/identity/flows/context';
import { normalizePhone } from '@/server/identity/phone-numbers';
import { requestContext } from '@/app/lib/client';
import { submittedValues, type FormState } from '@/app/lib/form-state';
import { safeNext, services, storeSession } from '@/app/lib/session';

export interface PhoneSentState extends FormState {
  sent?: boolean;
}

const NUMBER_HINT = 'Enter the number with its country code, like +44 7700 900123';

export async function requestPhoneCodeAction(
  _state: PhoneSentState,
  form: FormData,
): Promise<PhoneSentState> {
  const values = submittedValues(form);
  let phone: string;
  try {
    phone = normalizePhone(String(form.get('phone') ?? ''));
  } catch {
    return { fieldErrors: { phone: NUMBER_HINT }, values };
  }
  try {
    await services().identity.signInWithPhoneOtp(
      { phone, createUser: false, data: {}, channel: 'sms' },
      await requestContext(),
    );
  } catch (error) {
    if (isHttpError(error) && error.code === 'over_sms_send_rate_limit') {
      return { error: 'A code was sent moments ago; wait a little before asking for another', values };
    }
    return { error: isHttpError(error) ? error.message : 'Could not send the code; try again', values };
  }
  return { sent: true, values: { ...values, phone: `+${phone}` } };
}

export async function verifyPhoneCodeAction(_state: PhoneSentState, form: FormData): Promise<PhoneSentState> {
  const values = submittedValues(form);
  const code = String(form.get('code') ?? '').replace(/\s/g, '');
  if (!/^[0-9]{6,10}$/.test(code)) {
    return { sent: true, fieldErrors: { code: 'Enter the 6-digit code we texted you' }, values };
  }
  let session;
  try {
    session = await services().identity.verifyPost(
      { type: 'sms', phone: normalizePhone(String(form.get('phone') ?? '')), token: code },
      await requestContext(),
    );
  } catch (error) {
    const message = isHttpError(error) ? error.message : 'Could not check the code; try again';
    return { sent: true, fieldErrors: { code: message }, values };
  }
  if (!isTokenResponse(session)) return { sent: true, error: 'That code cannot sign you in', values };
  await storeSession(session);
  redirect(safeNext(typeof form.get('next') === 'string' ? String(form.get('next')) : null));
}
