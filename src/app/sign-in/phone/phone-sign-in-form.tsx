'use client';
// Two steps on one page: the mobile number, then the code texted to it, with the same answer for
// every number. A wrong or expired code shows under the code field.
import { useActionState } from 'react';
import { requestPhoneCodeAction, verifyPhoneCodeAction, type PhoneSentState } from '@/app/actions/phone-auth';
import { FormError } from '@/app/components/ui/field';
import { PhoneNumberField, TextedCodeField } from '@/app/components/phone-fields';
import { SubmitButton } from '@/app/components/ui/submit-button';

function CodeForm({ phone, next }: { phone: string; next: string | null }) {
  const [state, action] = useActionState(verifyPhoneCodeAction, {} as PhoneSentState);
  return (
    <form action={action} className="grid grid-cols-1 gap-4" noValidate>
      <p role="status" className="text-sm">
        If an account uses <span className="font-medium">{phone}</span>, we texted it a code.
      </p>
      <FormError>{state.error}</FormError>
      <input type="hidden" name="phone" value={phone} />
      <input type="hidden" name="next" value={next ?? ''} />
      <TextedCodeField error={state.fieldErrors?.code} />
      <SubmitButton pendingText="Signing in…" className="w-full">
        Sign in with code
      </SubmitButton>
    </form>
  );
}

export function PhoneSignInForm({ next }: { next: string | null }) {
  const [state, action] = useActionState(requestPhoneCodeAction, {} as PhoneSentState);
  if (state.sent) return <CodeForm phone={state.values?.phone ?? ''} next={next} />;
  return (
    <form action={action} className="grid grid-cols-1 gap-4" noValidate>
      <FormError>{state.error}</FormError>
      <input type="hidden" name="next" value={next ?? ''} />
      <PhoneNumberField defaultValue={state.values?.phone} error={state.fieldErrors?.phone} />
      <SubmitButton pendingText="Sending…" className="w-full">
        Text me a sign-in code
      </SubmitButton>
    </form>
  );
}
