'use client';
// The forms of a workspace's settings: name and address (errors under their fields, input kept),
// and deletion, which asks in a dialog and needs the workspace's address typed to confirm.
import { Trash2 } from 'lucide-react';
import { useActionState, useState } from 'react';
import { deleteWorkspaceAction, renameWorkspaceAction } from '@/app/actions/settings';
import { Button } from '@/app/components/ui/button';
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
  DialogTrigger,
} from '@/app/components/ui/dialog';
import { Field, FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { initialFormState } from '@/app/lib/form-state';

export function RenameWorkspaceForm({
  workspace,
}: {
  workspace: { id: string; name: string; slug: string };
}) {
  const [state, action] = useActionState(renameWorkspaceAction, initialFormState);
  return (
    <form action={action} className="grid max-w-xl gap-4" noValidate>
      <FormError>{state.error}</FormError>
      <input type="hidden" name="slug" value={workspace.slug} />
      <input type="hidden" name="workspace_id" value={workspace.id} />
      <Field
        label="Name"
        name="name"
        required
        maxLength={100}
        defaultValue={state.values?.name ?? workspace.name}
        error={state.fieldErrors?.name}
      />
      <Field
        label="Address"
        name="new_slug"
        required
        maxLength={48}
        autoCapitalize="none"
        spellCheck={false}
        defaultValue={state.values?.new_slug ?? workspace.slug}
        error={state.fieldErrors?.new_slug}
        hint="Lowercase letters, digits and dashes. Links to the old address keep working for members."
      />
      <div>
        <SubmitButton pendingText="Saving…">Save changes</SubmitButton>
      </div>
    </form>
  );
}

export function DeleteWorkspace({ workspace }: { workspace: { id: string; name: string; slug: string } }) {
  const [open, setOpen] = useState(false);
  const [state, action] = useActionState(deleteWorkspaceAction, initialFormState);
  return (
    <Dialog open={open} onOpenChange={setOpen}>
      <DialogTrigger asChild>
        <Button variant="destructive">
          <Trash2 aria-hidden="true" />
          Delete workspace
        </Button>
      </DialogTrigger>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>Delete {workspace.name}?</DialogTitle>
          <DialogDescription>
            Members, invitations, projects and activity are deleted with it. This cannot be undone.
          </DialogDescription>
        </DialogHeader>
        <form action={action} className="grid grid-cols-1 gap-4" noValidate>
          <FormError>{state.error}</FormError>
          <input type="hidden" name="slug" value={workspace.slug} />
          <input type="hidden" name="workspace_id" value={workspace.id} />
          <Field
            label={
              <>
                Type <code className="rounded bg-muted px-1 py-0.5">{workspace.slug}</code> to confirm
              </>
            }
            name="confirm"
            required
            autoComplete="off"
            autoCapitalize="none"
            spellCheck={false}
            defaultValue={state.values?.confirm ?? ''}
            error={state.fieldErrors?.confirm}
          />
          <DialogFooter>
            <Button variant="outline" onClick={() => setOpen(false)}>
              Cancel
            </Button>
            <SubmitButton variant="destructive" pendingText="Deleting…">
              Delete this workspace
            </SubmitButton>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}
