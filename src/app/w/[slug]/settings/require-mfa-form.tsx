'use client';
// The "require two-step verification" switch of a workspace's settings: one button that turns it
// on or off. Only a session that passed two-step verification may change it (so nobody locks
// themselves out); others are told to set it up first.
import Link from 'next/link';
import { useActionState } from 'react';
import { requireMfaAction } from '@/app/actions/mfa';
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
  return (
    <form action={action} className="grid max-w-xl gap-4">
      <FormError>{state.error}</FormError>
      <input type="hidden" name="slug" value={workspace.slug} />
      <input type="hidden" name="workspace_id" value={workspace.id} />
      <input type="hidden" name="require_mfa" value={required ? 'off' : 'on'} />
      <div>
        <SubmitButton variant={required ? 'outline' : 'default'} pendingText="Saving…">
          {required ? 'Stop requiring two-step verification' : 'Require two-step verification'}
        </SubmitButton>
      </div>
    </form>
  );
}
