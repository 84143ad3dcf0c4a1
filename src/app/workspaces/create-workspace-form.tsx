'use client';
// The new-workspace form: the name's error under the field with the input kept; "Creating…" while
// the request runs; success opens the new workspace.
import { useActionState } from 'react';
import { createWorkspaceAction } from '@/app/actions/workspaces';
import { Field, FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { initialFormState } from '@/app/lib/form-state';

export function CreateWorkspaceForm({ autoFocus = false }: { autoFocus?: boolean }) {
  const [state, action] = useActionState(createWorkspaceAction, initialFormState);
  return (
    <form
      action={action}
      className="grid grid-cols-1 gap-4 sm:grid-cols-[1fr_auto] sm:items-start"
      noValidate
    >
      <div className="grid grid-cols-1 gap-4 sm:col-span-2">
        <FormError>{state.error}</FormError>
      </div>
      <Field
        label="Workspace name"
        name="name"
        placeholder="e.g. Lovelace Labs"
        required
        maxLength={100}
        autoComplete="organization"
        autoFocus={autoFocus}
        defaultValue={state.values?.name ?? ''}
        error={state.fieldErrors?.name}
        hint="You can rename it and change its address later."
      />
      <SubmitButton pendingText="Creating…" className="sm:mt-6">
        Create workspace
      </SubmitButton>
    </form>
  );
}
