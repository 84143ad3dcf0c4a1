// The fields every account form asks for the same way: an e-mail address, the current password
// and a new password (its minimum length said up front). Each takes the form's state, so it shows
// what was typed again after a refusal (never a password) and its own error under it.
import type { ReactNode } from 'react';
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

export function CurrentPasswordField({
  state,
  name = 'password',
  label = 'Password',
}: {
  state: Shown;
  name?: string;
  label?: string;
}) {
  return (
    <Field
      label={label}
      name={name}
      type="password"
      autoComplete="current-password"
      required
      error={state.fieldErrors?.[name]}
    />
  );
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
    <Field
      label={label}
      name="password"
      type="password"
      autoComplete="new-password"
      required
      minLength={minLength}
      hint={note ? `At least ${minLength} characters. ${note}` : `At least ${minLength} characters.`}
      error={state.fieldErrors?.password}
    />
  );
}
