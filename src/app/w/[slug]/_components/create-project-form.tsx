'use client';
// The new-project form on a workspace's overview: the name's error under the field with the
// input kept; "Adding…" while it runs, so a double click adds one project.
import { Plus } from 'lucide-react';
import { useActionState } from 'react';
import { createProjectAction } from '@/app/actions/workspaces';
import { FieldError, FormError } from '@/app/components/ui/field';
import { Input } from '@/app/components/ui/input';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { initialFormState } from '@/app/lib/form-state';

export function CreateProjectForm({ slug, workspaceId }: { slug: string; workspaceId: string }) {
  const [state, action] = useActionState(createProjectAction, initialFormState);
  const error = state.fieldErrors?.name;
  return (
    <form action={action} className="grid grid-cols-1 gap-2" noValidate aria-label="New project">
      <FormError>{state.error}</FormError>
      <input type="hidden" name="slug" value={slug} />
      <input type="hidden" name="workspace_id" value={workspaceId} />
      <div className="flex flex-col gap-2 sm:flex-row">
        <label htmlFor="new-project" className="sr-only">
          New project name
        </label>
        <Input
          id="new-project"
          name="name"
          placeholder="New project name"
          maxLength={200}
          required
          defaultValue={state.values?.name ?? ''}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? 'new-project-error' : undefined}
        />
        <SubmitButton pendingText="Adding…">
          <Plus aria-hidden="true" />
          Add project
        </SubmitButton>
      </div>
      <FieldError id="new-project-error">{error}</FieldError>
    </form>
  );
}
