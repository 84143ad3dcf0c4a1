'use client';
// The second step with a phone: a button texts a code to the account's phone, then the code is
// typed in. A wrong or late code says so under the field; a new code can be asked for.
import { useActionState } from 'react';
import { phoneStepAction, sendPhoneStepCodeAction, type PhoneStepState } from '@/app/actions/phone-mfa';
import { FormError } from '@/app/components/ui/field';
import { TextedCodeField } from '@/app/components/phone-fields';
import { SubmitButton } from '@/app/components/ui/submit-button';

const initial: PhoneStepState = {};

export function PhoneStepForm({ next }: { next: string | null }) {
  const [sent, send] = useActionState(sendPhoneStepCodeAction, initial);
  const [checked, check] = useActionState(phoneStepAction, initial);
  const challenge = sent.challenge;
  return (
    <div className="grid gap-4">
      <form action={send} className="grid gap-2">
        <FormError>{sent.error}</FormError>
        {challenge ? (
          <p role="status" className="text-sm">
            We texted a code to your phone ending in {challenge.endsWith}.
          </p>
        ) : null}
        <SubmitButton variant={challenge ? 'outline' : 'default'} pendingText="Sending…" className="w-full">
          {challenge ? 'Send a new code' : 'Text me a code'}
        </SubmitButton>
      </form>
      {challenge ? (
        <form action={check} className="grid gap-4" noValidate>
          <FormError>{checked.error}</FormError>
          <input type="hidden" name="next" value={next ?? ''} />
          <input type="hidden" name="challenge_id" value={challenge.id} />
          <TextedCodeField error={checked.fieldErrors?.code} />
          <SubmitButton pendingText="Checking…" className="w-full">
            Continue
          </SubmitButton>
        </form>
      ) : null}
    </div>
  );
}
