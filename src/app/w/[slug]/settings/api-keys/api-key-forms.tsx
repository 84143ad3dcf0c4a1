'use client';
// The API keys page's controls: the form that makes a key (name, role up to the viewer's own,
// expiry) and shows its secret once with a copy button, and revoking a key, asked first.
import { KeyRound, X } from 'lucide-react';
import { useActionState } from 'react';
import { createApiKeyAction, revokeApiKeyAction, type CreateKeyState } from '@/app/actions/api-keys';
import { RoleSelect } from '@/app/components/role-select';
import { ConfirmAction } from '@/app/components/confirm-action';
import { SecretShownOnce } from '@/app/components/secret-shown-once';
import { Button } from '@/app/components/ui/button';
import { Field, FormError } from '@/app/components/ui/field';
import { Label, Select } from '@/app/components/ui/input';
import { SubmitButton } from '@/app/components/ui/submit-button';

const initial: CreateKeyState = {};
const EXPIRIES = [
  ['never', 'Never'],
  ['7', 'In 7 days'],
  ['30', 'In 30 days'],
  ['90', 'In 90 days'],
  ['365', 'In a year'],
] as const;

function NewKey({ created, slug }: { created: { name: string; key: string }; slug: string }) {
  return (
    <SecretShownOnce
      secret={created.key}
      label="New API key"
      copyLabel="Copy key"
      savedHref={`/w/${slug}/settings/api-keys`}
      marker="data-new-api-key"
    >
      Copy the key “{created.name}” now: it is shown only this once.
    </SecretShownOnce>
  );
}

export function CreateApiKeyForm({
  slug,
  workspaceId,
  roles,
}: {
  slug: string;
  workspaceId: string;
  roles: string[];
}) {
  const [state, action] = useActionState(createApiKeyAction, initial);
  if (state.created) return <NewKey created={state.created} slug={slug} />;
  return (
    <form action={action} className="grid grid-cols-1 gap-4" noValidate aria-label="Create an API key">
      <FormError>{state.error}</FormError>
      <input type="hidden" name="slug" value={slug} />
      <input type="hidden" name="workspace_id" value={workspaceId} />
      <div className="grid grid-cols-1 gap-4 sm:grid-cols-[minmax(0,1fr)_9rem_9rem] sm:items-start">
        <Field
          label="Name"
          name="name"
          placeholder="CI deploys"
          autoComplete="off"
          required
          maxLength={100}
          defaultValue={state.values?.name ?? ''}
          error={state.fieldErrors?.name}
        />
        <RoleSelect
          id="key-role"
          roles={roles}
          defaultValue={state.values?.role ?? 'member'}
          error={state.fieldErrors?.role}
        />
        <div className="grid grid-cols-1 gap-2">
          <Label htmlFor="key-expiry">Expires</Label>
          <Select id="key-expiry" name="expires_in_days" defaultValue={state.values?.expires_in_days ?? '90'}>
            {EXPIRIES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </Select>
        </div>
      </div>
      <div>
        <SubmitButton pendingText="Creating…">
          <KeyRound aria-hidden="true" />
          Create key
        </SubmitButton>
      </div>
    </form>
  );
}

export function RevokeApiKey({ slug, apiKey }: { slug: string; apiKey: { id: string; name: string } }) {
  return (
    <ConfirmAction
      trigger={
        <Button variant="ghost" size="sm" aria-label={`Revoke the key ${apiKey.name}`}>
          <X aria-hidden="true" />
          Revoke
        </Button>
      }
      title={`Revoke “${apiKey.name}”?`}
      description="Programs using this key are refused from their next request. This cannot be undone."
      confirmLabel="Revoke key"
      pendingLabel="Revoking…"
      action={revokeApiKeyAction}
      fields={{ slug, key_id: apiKey.id }}
    />
  );
}
