'use client';
// The profile page's forms: the display name (the picture is avatar-settings.tsx), the e-mail
// address, the password, and deleting the account. Errors appear under their fields with the
// input kept; each button says what it is doing while it runs.
import { useActionState } from 'react';
import {
  cancelEmailChangeAction,
  changeEmailAction,
  changePasswordAction,
  deleteAccountAction,
  updateProfileAction,
} from '@/app/actions/settings';
import { CurrentPasswordField, EmailField, NewPasswordField } from '@/app/components/account-fields';
import { Field, FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { initialFormState } from '@/app/lib/form-state';

export function ProfileForm({ profile }: { profile: { displayName: string | null } }) {
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
      <NewPasswordField state={state} minLength={minLength} note="Your other sessions are signed out." />
      <div>
        <SubmitButton pendingText="Changing…">Change password</SubmitButton>
      </div>
    </form>
  );
}

/**
 * The e-mail address: a pending change says which links it waits for and can be cancelled; the
 * hint says when a change takes effect (both addresses' links with secure e-mail change, else the
 * new address's link alone).
 */
export function EmailForm({
  email,
  pending,
  confirmsBothAddresses,
}: {
  email: string;
  pending: string | null;
  confirmsBothAddresses: boolean;
}) {
  const [state, action] = useActionState(changeEmailAction, initialFormState);
  return (
    <div className="grid max-w-xl gap-4">
      {pending ? (
        <form
          action={cancelEmailChangeAction}
          className="grid gap-3 rounded-md border bg-muted/40 p-3 text-sm"
          data-pending-email
        >
          <p>
            Waiting for confirmation of <span className="font-medium break-all">{pending}</span>
            {confirmsBothAddresses ? ' (open the links sent to both addresses)' : ''}. Until then you sign in
            with <span className="break-all">{email}</span>.
          </p>
          <div>
            <SubmitButton variant="outline" size="sm" pendingText="Cancelling…">
              Cancel this change
            </SubmitButton>
          </div>
        </form>
      ) : null}
      <form action={action} className="grid gap-4" noValidate>
        <FormError>{state.error}</FormError>
        <EmailField
          state={state}
          label="New e-mail address"
          hint={
            confirmsBothAddresses
              ? 'We e-mail a link to your current and your new address; the address changes once both are opened.'
              : 'We e-mail a link to the new address; the address changes as soon as it is opened.'
          }
        />
        <div>
          <SubmitButton pendingText="Sending…">Change e-mail</SubmitButton>
        </div>
      </form>
    </div>
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
