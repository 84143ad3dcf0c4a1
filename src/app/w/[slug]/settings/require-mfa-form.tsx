'use client';
// The "require two-step verification" switch of a workspace's settings: one button that turns it
// on or off. Only a session that passed two-step verification may change it (so nobody locks
// themselves out); others are told to set it up first. Turning it on asks first: members without
// it lose access at once.
import Link from 'next/link';
import { useActionState } from 'react';
import { requireMfaAction } from '@/app/actions/mfa';
import { ConfirmAction } from '@/app/components/confirm-action';
import { Button } from '@/app/components/ui/button';
import { FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { initialFormState } from '@/app/lib/form-state';

export function RequireMfaForm({
  workspace,
  required,
  canChange,
}: {
  workspace: { id: string; slug: string };
  required: boolean;
  canChange: boolean;
}) {
  const [state, action] = useActionState(requireMfaAction, initialFormState);
  if (!canChange) {
    return (
      <p className="text-sm text-muted-foreground">
        To change this, first{' '}
        <Link className="font-medium text-foreground underline" href="/settings/security">
          set up two-step verification
        </Link>{' '}
        for yourself and sign in with it.
      </p>
    );
  }
  const fields = { slug: workspace.slug, workspace_id: workspace.id };
  if (!required) {
    return (
      <div className="grid max-w-xl gap-4">
        <FormError>{state.error}</FormError>
        <div>
          <ConfirmAction
            trigger={<Button>Require two-step verification</Button>}
            title="Require two-step verification?"
            description="Members who have not set it up lose access to this workspace at once, until they set it up and sign in with it. Nothing of theirs is deleted."
            confirmLabel="Require it"
            pendingLabel="Saving…"
            action={action}
            fields={{ ...fields, require_mfa: 'on' }}
          />
        </div>
      </div>
    );
  }
  return (
    <form action={action} className="grid max-w-xl gap-4">
      <FormError>{state.error}</FormError>
      <input type="hidden" name="slug" value={workspace.slug} />
      <input type="hidden" name="workspace_id" value={workspace.id} />
      <input type="hidden" name="require_mfa" value="off" />
      <div>
        <SubmitButton variant="outline" pendingText="Saving…">
          Stop requiring two-step verification
        </SubmitButton>
      </div>
    </form>
  );
}
