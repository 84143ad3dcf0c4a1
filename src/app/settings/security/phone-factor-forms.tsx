'use client';
// Adding a phone as the second step on the Security page: the mobile number (with its country
// code), then the 6-digit code texted to it; once it is right, the recovery codes are shown once.
// The forms' state lives in the two-step card (usePhoneEnrolment), so the codes stay on screen
// when turning it on refreshes the page around them.
import { useActionState } from 'react';
import {
  confirmPhoneEnrolmentAction,
  startPhoneEnrolmentAction,
  type PhoneEnrolState,
} from '@/app/actions/phone-mfa';
import { FormError } from '@/app/components/ui/field';
import { PhoneNumberField, TextedCodeField } from '@/app/components/phone-fields';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { RecoveryCodes } from '@/app/settings/security/security-forms';

const initial: PhoneEnrolState = {};

export function usePhoneEnrolment() {
  const [started, start] = useActionState(startPhoneEnrolmentAction, initial);
  const [confirmed, confirm] = useActionState(confirmPhoneEnrolmentAction, initial);
  return { started, start, confirmed, confirm };
}

export function AddPhoneFactor({ enrolment }: { enrolment: ReturnType<typeof usePhoneEnrolment> }) {
  const { started, start, confirmed, confirm } = enrolment;
  if (confirmed.recoveryCodes) return <RecoveryCodes codes={confirmed.recoveryCodes} />;
  const pending = started.pending;
  if (!pending) {
    return (
      <form action={start} className="grid max-w-md gap-4" noValidate>
        <FormError>{started.error}</FormError>
        <PhoneNumberField defaultValue={started.values?.phone} error={started.fieldErrors?.phone} />
        <div>
          <SubmitButton variant="outline" pendingText="Sending a code…">
            Text me a code
          </SubmitButton>
        </div>
      </form>
    );
  }
  return (
    <form action={confirm} className="grid max-w-md gap-4" noValidate>
      <FormError>{confirmed.error}</FormError>
      <p role="status" className="text-sm">
        We texted a code to {pending.phone}.
      </p>
      <input type="hidden" name="factor_id" value={pending.factorId} />
      <input type="hidden" name="challenge_id" value={pending.challengeId} />
      <TextedCodeField error={confirmed.fieldErrors?.code} />
      <div>
        <SubmitButton pendingText="Checking…">Turn on two-step verification</SubmitButton>
      </div>
    </form>
  );
}
