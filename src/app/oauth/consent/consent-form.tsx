'use client';
// The consent page's answer: Allow or Deny, one form and one server action (useActionState); the
// button pressed shows that it is working while both are held, and a refusal (the request expired
// meanwhile) shows above them.
import { useActionState } from 'react';
import { useFormStatus } from 'react-dom';
import { answerConsentAction } from '@/app/actions/oauth';
import { Button } from '@/app/components/ui/button';
import { FormError } from '@/app/components/ui/field';
import { Spinner } from '@/app/components/ui/spinner';
import { initialFormState } from '@/app/lib/form-state';

function Choice({
  decision,
  label,
  pendingLabel,
  variant,
}: {
  decision: 'approve' | 'deny';
  label: string;
  pendingLabel: string;
  variant: 'default' | 'outline';
}) {
  const { pending, data } = useFormStatus();
  const mine = pending && data?.get('decision') === decision;
  return (
    <Button
      type="submit"
      name="decision"
      value={decision}
      variant={variant}
      className="w-full sm:flex-1"
      disabled={pending}
      aria-disabled={pending || undefined}
    >
      {mine ? (
        <>
          <Spinner />
          <span>{pendingLabel}</span>
        </>
      ) : (
        label
      )}
    </Button>
  );
}

export function ConsentForm({ authorizationId, appName }: { authorizationId: string; appName: string }) {
  const [state, action] = useActionState(answerConsentAction, initialFormState);
  return (
    <form action={action} className="grid gap-4" aria-label={`Answer ${appName}`}>
      <FormError>{state.error}</FormError>
      <input type="hidden" name="authorization_id" value={authorizationId} />
      <div className="flex flex-col-reverse gap-3 sm:flex-row">
        <Choice decision="deny" label="Deny" pendingLabel="Denying…" variant="outline" />
        <Choice decision="approve" label="Allow" pendingLabel="Allowing…" variant="default" />
      </div>
    </form>
  );
}
