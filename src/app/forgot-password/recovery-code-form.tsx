'use client';
// The reset e-mail's code, typed here: the way through when the link cannot be opened in the
// browser that asked for it (read on a phone, asked on a laptop). A right code signs the person in
// for the reset and goes on to set the new password; a wrong or expired one shows under the field.
import { useActionState } from 'react';
import { verifyRecoveryCodeAction, type SentState } from '@/app/actions/email-auth';
import { EmailCodeField } from '@/app/components/account-fields';
import { FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';

export function RecoveryCodeForm({ email }: { email: string }) {
  const [state, action] = useActionState(verifyRecoveryCodeAction, {} as SentState);
  return (
    <form action={action} className="grid grid-cols-1 gap-4 text-left" noValidate data-recovery-code>
      <FormError>{state.error}</FormError>
      <input type="hidden" name="email" value={email} />
      <EmailCodeField state={state} label="Code from the e-mail" />
      <SubmitButton pendingText="Checking…" className="w-full">
        Continue with code
      </SubmitButton>
    </form>
  );
}
