// In charge of the two fields every phone form asks for (signing in with a phone, adding a phone
// as the second step, the second step itself): the mobile number and the code texted to it, so
// they read, autofill and limit the same way everywhere.
import { Field } from '@/app/components/ui/field';

/** The mobile number, with its country code (E.164 is what the identity API accepts). */
export function PhoneNumberField({
  defaultValue,
  error,
}: {
  defaultValue?: string;
  error?: string | undefined;
}) {
  return (
    <Field
      label="Mobile number"
      name="phone"
      type="tel"
      autoComplete="tel"
      inputMode="tel"
      placeholder="+44 7700 900123"
      hint="With its country code."
      defaultValue={defaultValue ?? ''}
      required
      error={error}
    />
  );
}

/** The code from the text message: the phone offers it from the message (one-time-code). */
export function TextedCodeField({ error }: { error?: string | undefined }) {
  return (
    <Field
      label="Code from the text message"
      name="code"
      inputMode="numeric"
      autoComplete="one-time-code"
      maxLength={10}
      required
      autoFocus
      error={error}
    />
  );
}
