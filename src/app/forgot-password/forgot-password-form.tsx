'use client';
// The password-reset request: once sent, the form gives way to the same answer for every address
// ("If an account exists, we sent a link") and a field for the e-mail's code, which works in any
// browser; the button says "Sending…" while the request runs.
import { MailCheck } from 'lucide-react';
import { useActionState } from 'react';
import { requestPasswordResetAction, type SentState } from '@/app/actions/email-auth';
import { EmailField } from '@/app/components/account-fields';
import { FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { RecoveryCodeForm } from '@/app/forgot-password/recovery-code-form';

export function ForgotPasswordForm({ email }: { email: string | null }) {
  const [state, action] = useActionState(requestPasswordResetAction, {} as SentState);
  if (state.sent) {
    return (
      <div className="grid gap-6">
        <div className="text-center" role="status" data-sent>
          <span className="mx-auto mb-4 inline-flex size-10 items-center justify-center rounded-full bg-muted">
            <MailCheck className="size-5 text-muted-foreground" aria-hidden="true" />
          </span>
          <p className="font-medium">
            If an account exists for {state.values?.email}, we sent a link and a code.
          </p>
          <p className="mt-2 text-sm text-muted-foreground">
            Open the link in this browser within an hour, or enter the code below (it works wherever you read
            the e-mail). Nothing arrived? Check your spam folder.
          </p>
        </div>
        <RecoveryCodeForm email={state.values?.email ?? ''} />
      </div>
    );
  }
  return (
    <form action={action} className="grid grid-cols-1 gap-4" noValidate>
      <FormError>{state.error}</FormError>
      <EmailField state={state} initial={email ?? ''} />
      <SubmitButton pendingText="Sending…" className="w-full">
        Send reset link
      </SubmitButton>
    </form>
  );
}
