'use client';
// The sign-up form: field errors under their fields, a refusal above them, the e-mail kept; the
// button says "Creating account…" while the request runs. An account that must confirm its
// address is then asked to check its e-mail.
import { useActionState } from 'react';
import { signUpAction } from '@/app/actions/auth';
import { CheckEmail } from '@/app/components/check-email';
import { EmailField, NewPasswordField } from '@/app/components/account-fields';
import { FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { initialFormState } from '@/app/lib/form-state';
import type { SentState } from '@/app/actions/email-auth';

export function SignUpForm({
  next,
  email,
  minLength,
}: {
  next: string | null;
  email: string;
  minLength: number;
}) {
  const [state, action] = useActionState(signUpAction, initialFormState as SentState);
  if (state.sent) return <CheckEmail email={state.values?.email ?? ''} next={next} />;
  return (
    <form action={action} className="grid grid-cols-1 gap-4" noValidate>
      <FormError>{state.error}</FormError>
      <input type="hidden" name="next" value={next ?? ''} />
      <EmailField state={state} initial={email} />
      <NewPasswordField state={state} minLength={minLength} label="Password" />
      <SubmitButton pendingText="Creating account…" className="w-full">
        Create account
      </SubmitButton>
    </form>
  );
}
