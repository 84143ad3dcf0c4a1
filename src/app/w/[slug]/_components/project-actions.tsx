'use client';
// A project's actions menu: rename (a dialog with the name, its error kept in the dialog) and
// delete (asks first).
import { MoreHorizontal, Pencil, Trash2 } from 'lucide-react';
import { useActionState, useCallback, useState } from 'react';
import { deleteProjectAction, renameProjectAction } from '@/app/actions/workspaces';
import { ConfirmAction } from '@/app/components/confirm-action';
import { Button } from '@/app/components/ui/button';
import {
  Dialog,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/app/components/ui/dialog';
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuSeparator,
  DropdownMenuTrigger,
} from '@/app/components/ui/dropdown-menu';
import { Field, FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { initialFormState } from '@/app/lib/form-state';
import { useClosesOnSuccess } from '@/app/lib/use-closes-on-success';

function RenameDialog({
  slug,
  project,
  open,
  onOpenChange,
}: {
  slug: string;
  project: { id: string; name: string };
  open: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const [state, action, pending] = useActionState(renameProjectAction, initialFormState);
  const close = useCallback(() => onOpenChange(false), [onOpenChange]);
  useClosesOnSuccess(pending, state, close);
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent>
        <DialogHeader>
          <DialogTitle>Rename project</DialogTitle>
          <DialogDescription>Everyone in the workspace sees the new name.</DialogDescription>
        </DialogHeader>
        <form action={action} className="grid grid-cols-1 gap-4" noValidate>
          <FormError>{state.error}</FormError>
          <input type="hidden" name="slug" value={slug} />
          <input type="hidden" name="project_id" value={project.id} />
          <Field
            label="Name"
            name="name"
            id={`rename-${project.id}`}
            required
            maxLength={200}
            defaultValue={state.values?.name ?? project.name}
            error={state.fieldErrors?.name}
          />
          <DialogFooter>
            <Button variant="outline" onClick={close}>
              Cancel
            </Button>
            <SubmitButton pendingText="Saving…">Save</SubmitButton>
          </DialogFooter>
        </form>
      </DialogContent>
    </Dialog>
  );
}

export function ProjectActions({ slug, project }: { slug: string; project: { id: string; name: string } }) {
  const [renaming, setRenaming] = useState(false);
  const [deleting, setDeleting] = useState(false);
  return (
    <>
      <DropdownMenu>
        <DropdownMenuTrigger asChild>
          <Button variant="ghost" size="icon" aria-label={`Actions for ${project.name}`}>
            <MoreHorizontal aria-hidden="true" />
          </Button>
        </DropdownMenuTrigger>
        <DropdownMenuContent align="end">
          <DropdownMenuItem onSelect={() => setRenaming(true)}>
            <Pencil aria-hidden="true" />
            Rename
          </DropdownMenuItem>
          <DropdownMenuSeparator />
          <DropdownMenuItem destructive onSelect={() => setDeleting(true)}>
            <Trash2 aria-hidden="true" />
            Delete
          </DropdownMenuItem>
        </DropdownMenuContent>
      </DropdownMenu>
      <RenameDialog slug={slug} project={project} open={renaming} onOpenChange={setRenaming} />
      <ConfirmAction
        open={deleting}
        onOpenChange={setDeleting}
        title={`Delete ${project.name}?`}
        description="The project is deleted for everyone in the workspace. This cannot be undone."
        confirmLabel="Delete project"
        pendingLabel="Deleting…"
        action={deleteProjectAction}
        fields={{ slug, project_id: project.id }}
      />
    </>
  );
}
