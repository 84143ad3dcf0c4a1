'use client';
// The second step's form: the 6-digit code from the app, or (switched with a button) one of the
// recovery codes. A wrong code says so under the field; the button says "Checking…" meanwhile.
import { useActionState, useState } from 'react';
import { secondStepAction } from '@/app/actions/mfa';
import { Button } from '@/app/components/ui/button';
import { Field, FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { initialFormState } from '@/app/lib/form-state';

/** `recoveryOnly`: the second factor is a security key, so the form takes recovery codes alone. */
export function SecondStepForm({
  next,
  recoveryOnly = false,
}: {
  next: string | null;
  recoveryOnly?: boolean;
}) {
  const [state, action] = useActionState(secondStepAction, initialFormState);
  const [method, setMethod] = useState<'totp' | 'recovery'>(
    recoveryOnly || state.values?.method === 'recovery' ? 'recovery' : 'totp',
  );
  return (
    <form action={action} className="grid grid-cols-1 gap-4" noValidate>
      <FormError>{state.error}</FormError>
      <input type="hidden" name="next" value={next ?? ''} />
      <input type="hidden" name="method" value={method} />
      {method === 'totp' ? (
        <Field
          key="totp"
          label="Code from your authenticator app"
          name="code"
          inputMode="numeric"
          autoComplete="one-time-code"
          maxLength={7}
          required
          autoFocus
          error={state.fieldErrors?.code}
        />
      ) : (
        <Field
          key="recovery"
          label="Recovery code"
          name="code"
          autoComplete="off"
          autoCapitalize="none"
          spellCheck={false}
          maxLength={11}
          required
          autoFocus
          hint="Each recovery code works once."
          error={state.fieldErrors?.code}
        />
      )}
      <SubmitButton pendingText="Checking…" className="w-full">
        Continue
      </SubmitButton>
      {recoveryOnly ? null : (
        <Button
          type="button"
          variant="link"
          onClick={() => setMethod(method === 'totp' ? 'recovery' : 'totp')}
        >
          {method === 'totp' ? 'Use a recovery code instead' : 'Use the authenticator app instead'}
        </Button>
      )}
    </form>
  );
}
