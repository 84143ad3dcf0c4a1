'use client';
// The domains page's controls: the form that claims a domain (field errors under it), and per
// domain the policy form (who may join, at which role), "Check now" for its DNS record and
// removing it, asked first.
import { Globe, RefreshCw, Trash2 } from 'lucide-react';
import { useActionState } from 'react';
import {
  addDomainAction,
  checkDomainAction,
  removeDomainAction,
  setDomainPolicyAction,
} from '@/app/actions/domains';
import { ConfirmAction } from '@/app/components/confirm-action';
import { Button } from '@/app/components/ui/button';
import { Field, FormError } from '@/app/components/ui/field';
import { Label, Select } from '@/app/components/ui/input';
import { SubmitButton } from '@/app/components/ui/submit-button';
import type { FormState } from '@/app/lib/form-state';

const initial: FormState = {};

export function AddDomainForm({ slug, workspaceId }: { slug: string; workspaceId: string }) {
  const [state, action] = useActionState(addDomainAction, initial);
  return (
    <form action={action} className="grid grid-cols-1 gap-4" noValidate aria-label="Add a domain">
      <FormError>{state.error}</FormError>
      <input type="hidden" name="slug" value={slug} />
      <input type="hidden" name="workspace_id" value={workspaceId} />
      <div className="grid grid-cols-1 gap-4 sm:grid-cols-[minmax(0,1fr)_auto] sm:items-end">
        <Field
          label="Domain"
          name="domain"
          placeholder="acme.com"
          autoComplete="off"
          required
          maxLength={253}
          defaultValue={state.values?.domain ?? ''}
          error={state.fieldErrors?.domain}
        />
        <div>
          <SubmitButton pendingText="Adding…">
            <Globe aria-hidden="true" />
            Add domain
          </SubmitButton>
        </div>
      </div>
    </form>
  );
}

export function DomainPolicyForm({
  slug,
  domain,
}: {
  slug: string;
  domain: { id: string; domain: string; policy: string; join_role: string; verified: boolean };
}) {
  const id = `policy-${domain.id}`;
  return (
    <form
      action={setDomainPolicyAction}
      aria-label={`Who may join by ${domain.domain}`}
      className="grid grid-cols-1 gap-3 sm:grid-cols-[minmax(0,1fr)_9rem_auto] sm:items-end"
    >
      <input type="hidden" name="slug" value={slug} />
      <input type="hidden" name="domain_id" value={domain.id} />
      <div className="grid grid-cols-1 gap-2">
        <Label htmlFor={id}>People with an address on {domain.domain}</Label>
        <Select id={id} name="policy" defaultValue={domain.policy} disabled={!domain.verified}>
          <option value="off">Cannot join by domain</option>
          <option value="auto_join">Join with one click</option>
          <option value="request">Ask to join; an admin approves</option>
        </Select>
      </div>
      <div className="grid grid-cols-1 gap-2">
        <Label htmlFor={`${id}-role`}>As</Label>
        <Select
          id={`${id}-role`}
          name="join_role"
          defaultValue={domain.join_role}
          disabled={!domain.verified}
        >
          <option value="viewer">viewer</option>
          <option value="member">member</option>
        </Select>
      </div>
      <div>
        <SubmitButton variant="outline" pendingText="Saving…" disabled={!domain.verified}>
          Save
        </SubmitButton>
      </div>
    </form>
  );
}

export function CheckDomainButton({
  slug,
  workspaceId,
  domainId,
}: {
  slug: string;
  workspaceId: string;
  domainId: string;
}) {
  return (
    <form action={checkDomainAction}>
      <input type="hidden" name="slug" value={slug} />
      <input type="hidden" name="workspace_id" value={workspaceId} />
      <input type="hidden" name="domain_id" value={domainId} />
      <SubmitButton variant="outline" size="sm" pendingText="Checking…">
        <RefreshCw aria-hidden="true" />
        Check now
      </SubmitButton>
    </form>
  );
}

export function RemoveDomain({
  slug,
  workspaceId,
  domain,
}: {
  slug: string;
  workspaceId: string;
  domain: { id: string; domain: string };
}) {
  return (
    <ConfirmAction
      trigger={
        <Button variant="ghost" size="sm" aria-label={`Remove ${domain.domain}`}>
          <Trash2 aria-hidden="true" />
          Remove
        </Button>
      }
      title={`Remove ${domain.domain}?`}
      description="People with an address on it can no longer join by it. Members who joined stay."
      confirmLabel="Remove domain"
      pendingLabel="Removing…"
      action={removeDomainAction}
      fields={{ slug, workspace_id: workspaceId, domain_id: domain.id }}
    />
  );
}
