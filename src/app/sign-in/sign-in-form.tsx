'use client';
// The sign-in form: a refusal ("Invalid login credentials", a wait after too many attempts) shows
// above the fields with the e-mail kept; the button says "Signing in…" while the request runs.
import { useActionState } from 'react';
import { signInAction } from '@/app/actions/auth';
import { CurrentPasswordField, EmailField } from '@/app/components/account-fields';
import { FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { initialFormState } from '@/app/lib/form-state';

export function SignInForm({ next }: { next: string | null }) {
  const [state, action] = useActionState(signInAction, initialFormState);
  return (
    <form action={action} className="grid grid-cols-1 gap-4" noValidate>
      <FormError>{state.error}</FormError>
      <input type="hidden" name="next" value={next ?? ''} />
      <EmailField state={state} />
      <CurrentPasswordField state={state} keep={false} />
      <SubmitButton pendingText="Signing in…" className="w-full">
        Sign in
      </SubmitButton>
    </form>
  );
}
