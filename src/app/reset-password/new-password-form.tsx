'use client';
// The new password, with the refusal (too short, too weak) under the field.
import { useActionState } from 'react';
import { setNewPasswordAction } from '@/app/actions/email-auth';
import { NewPasswordField } from '@/app/components/account-fields';
import { FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { initialFormState } from '@/app/lib/form-state';

export function NewPasswordForm({ minLength }: { minLength: number }) {
  const [state, action] = useActionState(setNewPasswordAction, initialFormState);
  return (
    <form action={action} className="grid grid-cols-1 gap-4" noValidate>
      <FormError>{state.error}</FormError>
      <NewPasswordField state={state} minLength={minLength} />
      <SubmitButton pendingText="Saving…" className="w-full">
        Set password and continue
      </SubmitButton>
    </form>
  );
}
