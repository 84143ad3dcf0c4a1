'use client';
// "Check your e-mail" after a sign-up that needs confirming: names the address, and offers to send
// the link again once a minute has passed (the identity service's own resend interval), with the
// outcome said in place.
import { MailCheck } from 'lucide-react';
import { useActionState, useEffect, useState } from 'react';
import { resendConfirmationAction, type SentState } from '@/app/actions/email-auth';
import { FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';

const RESEND_AFTER_SECONDS = 60;

export function CheckEmail({ email, next }: { email: string; next: string | null }) {
  const [state, action] = useActionState(resendConfirmationAction, {} as SentState);
  const [wait, setWait] = useState(RESEND_AFTER_SECONDS);
  // Every successful resend starts the minute again.
  useEffect(() => setWait(RESEND_AFTER_SECONDS), [state]);
  useEffect(() => {
    if (wait <= 0) return;
    const timer = setTimeout(() => setWait((w) => w - 1), 1000);
    return () => clearTimeout(timer);
  }, [wait]);
  return (
    <div className="text-center" data-check-email>
      <span className="mx-auto mb-4 inline-flex size-10 items-center justify-center rounded-full bg-muted">
        <MailCheck className="size-5 text-muted-foreground" aria-hidden="true" />
      </span>
      <h2 className="text-lg font-semibold">Check your e-mail</h2>
      <p className="mt-2 text-sm text-muted-foreground">
        We sent a confirmation link to <span className="font-medium text-foreground">{email}</span>. Open it
        in this browser to finish creating your account.
      </p>
      <form action={action} className="mt-6 grid gap-3">
        <FormError>{state.error}</FormError>
        {state.sent ? (
          <p role="status" className="text-sm">
            We sent a new link.
          </p>
        ) : null}
        <input type="hidden" name="email" value={email} />
        <input type="hidden" name="next" value={next ?? ''} />
        <SubmitButton pendingText="Sending…" variant="outline" className="w-full" disabled={wait > 0}>
          {wait > 0 ? `Send again in ${wait} s` : 'Send the link again'}
        </SubmitButton>
      </form>
    </div>
  );
}
