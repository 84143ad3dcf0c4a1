'use client';
// Two steps on one page: the e-mail address, then (once sent) the code from the e-mail, with the
// same answer for every address. A wrong or expired code shows under the code field.
import { useActionState } from 'react';
import { requestSignInCodeAction, verifySignInCodeAction, type SentState } from '@/app/actions/email-auth';
import { EmailCodeField, EmailField } from '@/app/components/account-fields';
import { FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';

export function CodeForm({ email, next }: { email: string; next: string | null }) {
  const [state, action] = useActionState(verifySignInCodeAction, {} as SentState);
  return (
    <form action={action} className="grid grid-cols-1 gap-4" noValidate>
      <p role="status" className="text-sm">
        If an account exists for <span className="font-medium">{email}</span>, we sent a sign-in link and a
        code. Open the link in this browser, or enter the code.
      </p>
      <FormError>{state.error}</FormError>
      <input type="hidden" name="email" value={email} />
      <input type="hidden" name="next" value={next ?? ''} />
      <EmailCodeField state={state} />
      <SubmitButton pendingText="Signing in…" className="w-full">
        Sign in with code
      </SubmitButton>
    </form>
  );
}

export function EmailSignInForm({ next }: { next: string | null }) {
  const [state, action] = useActionState(requestSignInCodeAction, {} as SentState);
  if (state.sent) return <CodeForm email={state.values?.email ?? ''} next={next} />;
  return (
    <form action={action} className="grid grid-cols-1 gap-4" noValidate>
      <FormError>{state.error}</FormError>
      <input type="hidden" name="next" value={next ?? ''} />
      <EmailField state={state} />
      <SubmitButton pendingText="Sending…" className="w-full">
        E-mail me a sign-in link and code
      </SubmitButton>
    </form>
  );
}
