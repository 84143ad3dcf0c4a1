'use client';
// The one step on the page for a link opened elsewhere: send a fresh link and code to the same
// address from this browser; once sent, the code field of that flow (reset or sign-in) follows.
import { MailCheck } from 'lucide-react';
import { useActionState } from 'react';
import { resendStrandedLinkAction, type ResentState } from '@/app/actions/email-auth';
import { FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { RecoveryCodeForm } from '@/app/forgot-password/recovery-code-form';
import { CodeForm } from '@/app/sign-in/email/email-sign-in-form';

export function ResendStrandedLinkForm({
  code,
  email,
  kind,
  next,
}: {
  code: string;
  email: string;
  kind: 'recovery' | 'magiclink';
  next: string | null;
}) {
  const [state, action] = useActionState(resendStrandedLinkAction, {} as ResentState);
  if (state.sent && state.kind === 'recovery') {
    return (
      <div className="grid gap-6">
        <Sent email={email} />
        <RecoveryCodeForm email={email} />
      </div>
    );
  }
  if (state.sent) return <CodeForm email={email} next={state.values?.next ?? next} />;
  return (
    <form action={action} className="grid gap-4" noValidate>
      <FormError>{state.error}</FormError>
      <p className="text-sm">
        {kind === 'recovery' ? 'To reset your password here' : 'To sign in here'}, we can send a new link and
        code to <span className="font-medium break-all">{email}</span>. The link will work in this browser;
        the code works wherever you type it.
      </p>
      <input type="hidden" name="code" value={code} />
      <input type="hidden" name="next" value={next ?? ''} />
      <SubmitButton pendingText="Sending…" className="w-full">
        Send a new link here
      </SubmitButton>
    </form>
  );
}

function Sent({ email }: { email: string }) {
  return (
    <div className="text-center" role="status" data-sent>
      <span className="mx-auto mb-4 inline-flex size-10 items-center justify-center rounded-full bg-muted">
        <MailCheck className="size-5 text-muted-foreground" aria-hidden="true" />
      </span>
      <p className="font-medium">
        We sent a new link and code to <span className="break-all">{email}</span>.
      </p>
      <p className="mt-2 text-sm text-muted-foreground">
        Open the link in this browser, or enter the code below.
      </p>
    </div>
  );
}
