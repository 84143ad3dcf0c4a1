'use client';
// The profile page's forms: name and picture, the e-mail address, the password, and deleting the
// account. Errors appear under their fields with the input kept; each button says what it is doing
// while it runs.
import { useActionState } from 'react';
import {
  changeEmailAction,
  changePasswordAction,
  deleteAccountAction,
  updateProfileAction,
} from '@/app/actions/settings';
import { CurrentPasswordField, EmailField, NewPasswordField } from '@/app/components/account-fields';
import { Field, FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { initialFormState } from '@/app/lib/form-state';

export function ProfileForm({
  profile,
}: {
  profile: { displayName: string | null; avatarUrl: string | null };
}) {
  const [state, action] = useActionState(updateProfileAction, initialFormState);
  return (
    <form action={action} className="grid max-w-xl gap-4" noValidate>
      <FormError>{state.error}</FormError>
      <Field
        label="Display name"
        name="display_name"
        maxLength={100}
        autoComplete="name"
        defaultValue={state.values?.display_name ?? profile.displayName ?? ''}
        error={state.fieldErrors?.display_name}
        hint="How your teammates see you. Leave empty to show your e-mail."
      />
      <Field
        label="Avatar URL"
        name="avatar_url"
        type="url"
        placeholder="https://…"
        defaultValue={state.values?.avatar_url ?? profile.avatarUrl ?? ''}
        error={state.fieldErrors?.avatar_url}
        hint="A picture at an http(s) address; without one, your initials are shown."
      />
      <div>
        <SubmitButton pendingText="Saving…">Save profile</SubmitButton>
      </div>
    </form>
  );
}

export function PasswordForm({ minLength }: { minLength: number }) {
  const [state, action] = useActionState(changePasswordAction, initialFormState);
  return (
    <form action={action} className="grid max-w-xl gap-4" noValidate>
      <FormError>{state.error}</FormError>
      <CurrentPasswordField state={state} name="current_password" label="Current password" />
      <NewPasswordField state={state} minLength={minLength} note="Other devices stay signed in." />
      <div>
        <SubmitButton pendingText="Changing…">Change password</SubmitButton>
      </div>
    </form>
  );
}

export function EmailForm({ email, pending }: { email: string; pending: string | null }) {
  const [state, action] = useActionState(changeEmailAction, initialFormState);
  return (
    <form action={action} className="grid max-w-xl gap-4" noValidate>
      <FormError>{state.error}</FormError>
      {pending ? (
        <p className="text-sm" data-pending-email>
          Waiting for confirmation of <span className="font-medium">{pending}</span>. Until then you sign in
          with {email}.
        </p>
      ) : null}
      <EmailField
        state={state}
        label="New e-mail address"
        hint="We e-mail a confirmation link; your address changes only once it is confirmed."
      />
      <div>
        <SubmitButton pendingText="Sending…">Change e-mail</SubmitButton>
      </div>
    </form>
  );
}

/** Deleting the account: proven with the current password, or the address for an account without one. */
export function DeleteAccountForm({ email, hasPassword }: { email: string; hasPassword: boolean }) {
  const [state, action] = useActionState(deleteAccountAction, initialFormState);
  return (
    <form action={action} className="grid max-w-xl gap-4" noValidate>
      <FormError>{state.error}</FormError>
      {hasPassword ? (
        // its own name: the password form on this page has a current_password field too
        <CurrentPasswordField state={state} name="account_password" label="Current password" />
      ) : (
        <Field
          label={`Type ${email} to confirm`}
          name="confirm_email"
          autoComplete="off"
          error={state.fieldErrors?.confirm_email}
        />
      )}
      <div>
        <SubmitButton variant="destructive" pendingText="Deleting…">
          Delete my account
        </SubmitButton>
      </div>
    </form>
  );
}
