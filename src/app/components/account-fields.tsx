'use client';
// The fields every account form asks for the same way: an e-mail address, the current password
// and a new password (its minimum length said up front). Each takes the form's state, so it shows
// its own error under it and, after a refusal, what was typed: the address from the answer, a
// password from the browser alone (the server never sends a password back).
import { useState, type ReactNode } from 'react';
import { Field } from '@/app/components/ui/field';
import type { FormState } from '@/app/lib/form-state';

type Shown = Pick<FormState, 'values' | 'fieldErrors'>;

export function EmailField({
  state,
  label = 'E-mail',
  initial = '',
  hint,
}: {
  state: Shown;
  label?: string;
  /** the address to start from before anything was submitted */
  initial?: string;
  hint?: ReactNode;
}) {
  return (
    <Field
      label={label}
      name="email"
      type="email"
      autoComplete="email"
      required
      defaultValue={state.values?.email ?? initial}
      error={state.fieldErrors?.email}
      hint={hint}
    />
  );
}

/** The 6-digit code an identity e-mail carries (sign-in, reset), shown again after a refusal. */
export function EmailCodeField({ state, label = 'Code' }: { state: Shown; label?: string }) {
  return (
    <Field
      label={label}
      name="code"
      inputMode="numeric"
      autoComplete="one-time-code"
      maxLength={10}
      required
      defaultValue={state.values?.code ?? ''}
      error={state.fieldErrors?.code}
    />
  );
}

/**
 * A password input that keeps what was typed when its form's action answers: React resets a
 * form's uncontrolled fields after an action, and a refused sign-up or password change must not
 * make the person type it again. Held in the browser's memory only; a form that succeeded
 * redirects or remounts it (a `key`) to clear it.
 */
function KeptPasswordField(props: Omit<Parameters<typeof Field>[0], 'value' | 'onChange' | 'defaultValue'>) {
  const [value, setValue] = useState('');
  return <Field {...props} type="password" value={value} onChange={(e) => setValue(e.target.value)} />;
}

/**
 * The password the account has now. Kept after a refusal where the refusal is about something
 * else (a password change's new password); at sign-in (`keep` false) a refusal means it was
 * wrong, so it is cleared for the next try.
 */
export function CurrentPasswordField({
  state,
  name = 'password',
  label = 'Password',
  keep = true,
}: {
  state: Shown;
  name?: string;
  label?: string;
  keep?: boolean;
}) {
  const props = {
    label,
    name,
    autoComplete: 'current-password',
    required: true,
    error: state.fieldErrors?.[name],
  };
  return keep ? <KeptPasswordField {...props} /> : <Field {...props} type="password" />;
}

export function NewPasswordField({
  state,
  minLength,
  label = 'New password',
  note,
}: {
  state: Shown;
  minLength: number;
  label?: string;
  /** said after the minimum length */
  note?: string;
}) {
  return (
    <KeptPasswordField
      label={label}
      name="password"
      autoComplete="new-password"
      required
      minLength={minLength}
      hint={note ? `At least ${minLength} characters. ${note}` : `At least ${minLength} characters.`}
      error={state.fieldErrors?.password}
    />
  );
}
