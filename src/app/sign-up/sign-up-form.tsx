'use client';
// The sign-up form: field errors under their fields, a refusal above them, the e-mail kept; the
// button says "Creating account…" while the request runs. An account that must confirm its
// address is then asked to check its e-mail.
import { useActionState } from 'react';
import { signUpAction } from '@/app/actions/auth';
import { CheckEmail } from '@/app/components/check-email';
import { Field, FormError } from '@/app/components/ui/field';
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
      <Field
        label="E-mail"
        name="email"
        type="email"
        autoComplete="email"
        required
        defaultValue={state.values?.email ?? email}
        error={state.fieldErrors?.email}
      />
      <Field
        label="Password"
        name="password"
        type="password"
        autoComplete="new-password"
        required
        minLength={minLength}
        hint={`At least ${minLength} characters.`}
        error={state.fieldErrors?.password}
      />
      <SubmitButton pendingText="Creating account…" className="w-full">
        Create account
      </SubmitButton>
    </form>
  );
}
