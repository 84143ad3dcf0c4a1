'use client';
// The notification preferences form: how often the digest comes, and which of the workspaces on
// this page it leaves out (each listed one is sent as `shown`, so saving changes those alone);
// "Saving…" while it runs.
import { useActionState } from 'react';
import { updateNotificationsAction } from '@/app/actions/settings';
import { FieldError, FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { initialFormState } from '@/app/lib/form-state';

const FREQUENCIES = [
  { value: 'daily', label: 'Daily', hint: 'A summary every morning of what happened the day before.' },
  { value: 'weekly', label: 'Weekly', hint: 'One summary a week.' },
  { value: 'off', label: 'Off', hint: 'No digest e-mails. Invitations still arrive.' },
] as const;

export function NotificationsForm({
  frequency,
  muted,
  workspaces,
  searching = '',
}: {
  frequency: string;
  muted: string[];
  workspaces: { id: string; name: string }[];
  /** the search the list answers, if any */
  searching?: string;
}) {
  const [state, action] = useActionState(updateNotificationsAction, initialFormState);
  return (
    <form action={action} className="grid grid-cols-1 gap-6" noValidate>
      <FormError>{state.error}</FormError>
      <fieldset className="grid grid-cols-1 gap-2">
        <legend className="mb-2 text-sm font-semibold">Activity digest</legend>
        {FREQUENCIES.map((f) => (
          <label
            key={f.value}
            className="flex min-h-11 cursor-pointer items-start gap-3 rounded-md border p-3 has-[:checked]:border-primary has-[:checked]:bg-primary/5"
          >
            <input
              type="radio"
              name="digest_frequency"
              value={f.value}
              defaultChecked={frequency === f.value}
              className="mt-0.5 size-4 accent-[var(--primary)]"
            />
            <span className="grid grid-cols-1 gap-0.5">
              <span className="text-sm font-medium">{f.label}</span>
              <span className="text-sm text-muted-foreground">{f.hint}</span>
            </span>
          </label>
        ))}
        <FieldError>{state.fieldErrors?.digest_frequency}</FieldError>
      </fieldset>
      <fieldset className="grid grid-cols-1 gap-2">
        <legend className="mb-2 text-sm font-semibold">Leave these workspaces out of the digest</legend>
        {workspaces.map((w) => (
          <input key={`shown-${w.id}`} type="hidden" name="shown" value={w.id} />
        ))}
        {workspaces.length === 0 ? (
          <p className="text-sm text-muted-foreground">
            {searching ? `No workspace of yours matches “${searching}”.` : 'You are in no workspace yet.'}
          </p>
        ) : (
          workspaces.map((w) => (
            <label
              key={w.id}
              className="flex min-h-11 cursor-pointer items-center gap-3 rounded-md px-1 text-sm"
            >
              <input
                type="checkbox"
                name="muted"
                value={w.id}
                defaultChecked={muted.includes(w.id)}
                className="size-4 accent-[var(--primary)]"
              />
              {w.name}
            </label>
          ))
        )}
      </fieldset>
      <div>
        <SubmitButton pendingText="Saving…">Save preferences</SubmitButton>
      </div>
    </form>
  );
}
