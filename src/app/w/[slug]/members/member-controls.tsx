'use client';
// The controls of the members page: the invite form (errors under the field, input kept), a
// member's role menu (only the roles the viewer may grant), and the actions that ask first:
// remove a member, revoke an invitation, leave the workspace.
import { Check, ChevronDown, LogOut, Send, UserMinus, X } from 'lucide-react';
import { useActionState, useRef, useState } from 'react';
import {
  changeRoleAction,
  inviteAction,
  leaveWorkspaceAction,
  removeMemberAction,
  resendInvitationAction,
  revokeInvitationAction,
} from '@/app/actions/members';
import { RoleSelect } from '@/app/components/role-select';
import { ConfirmAction } from '@/app/components/confirm-action';
import { Button } from '@/app/components/ui/button';
import {
  DropdownMenu,
  DropdownMenuContent,
  DropdownMenuItem,
  DropdownMenuLabel,
  DropdownMenuTrigger,
} from '@/app/components/ui/dropdown-menu';
import { Field, FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';
import { initialFormState } from '@/app/lib/form-state';

const ROLE_HELP: Record<string, string> = {
  viewer: 'Can see everything, change nothing',
  member: 'Can add and edit projects',
  admin: 'Can also invite and manage members',
  owner: 'Full control, including billing and deletion',
};

export function InviteForm({
  slug,
  workspaceId,
  roles,
}: {
  slug: string;
  workspaceId: string;
  roles: string[];
}) {
  const [state, action] = useActionState(inviteAction, initialFormState);
  return (
    <form action={action} className="grid grid-cols-1 gap-4" noValidate aria-label="Invite someone">
      <FormError>{state.error}</FormError>
      <input type="hidden" name="slug" value={slug} />
      <input type="hidden" name="workspace_id" value={workspaceId} />
      <div className="grid grid-cols-1 gap-4 sm:grid-cols-[minmax(0,1fr)_11rem_auto] sm:items-start">
        <Field
          label="E-mail"
          name="email"
          type="email"
          placeholder="grace@example.com"
          autoComplete="off"
          required
          defaultValue={state.values?.email ?? ''}
          error={state.fieldErrors?.email}
        />
        <RoleSelect
          id="invite-role"
          roles={roles}
          defaultValue={state.values?.role ?? 'member'}
          error={state.fieldErrors?.role}
        />
        <SubmitButton pendingText="Sending…" className="sm:mt-6">
          <Send aria-hidden="true" />
          Send invitation
        </SubmitButton>
      </div>
    </form>
  );
}

export function RoleMenu({
  slug,
  workspaceId,
  member,
  roles,
}: {
  slug: string;
  workspaceId: string;
  member: { userId: string; email: string; name: string; role: string };
  roles: string[];
}) {
  const form = useRef<HTMLFormElement>(null);
  const role = useRef<HTMLInputElement>(null);
  const trigger = useRef<HTMLButtonElement>(null);
  // Making someone an owner is hard to undo (an owner can remove other owners): it asks first.
  const [confirmOwner, setConfirmOwner] = useState(false);
  return (
    <>
      <form ref={form} action={changeRoleAction} hidden>
        <input type="hidden" name="slug" value={slug} />
        <input type="hidden" name="workspace_id" value={workspaceId} />
        <input type="hidden" name="user_id" value={member.userId} />
        <input ref={role} type="hidden" name="role" defaultValue={member.role} />
      </form>
      <DropdownMenu>
        <DropdownMenuTrigger asChild>
          <Button
            ref={trigger}
            variant="outline"
            size="sm"
            aria-label={`Role of ${member.email}: ${member.role}`}
          >
            <span className="capitalize">{member.role}</span>
            <ChevronDown aria-hidden="true" />
          </Button>
        </DropdownMenuTrigger>
        <DropdownMenuContent align="end" className="w-72">
          <DropdownMenuLabel>Role of {member.name}</DropdownMenuLabel>
          {roles.map((r) => (
            <DropdownMenuItem
              key={r}
              disabled={r === member.role}
              onSelect={() => {
                if (r === 'owner') {
                  setConfirmOwner(true);
                  return;
                }
                if (!role.current || !form.current) return;
                role.current.value = r;
                form.current.requestSubmit();
              }}
              className="items-start py-2"
            >
              <span className="grid">
                <span className="font-medium capitalize">
                  {r}
                  {r === member.role ? <span className="sr-only"> (current role)</span> : null}
                </span>
                <span className="text-xs text-muted-foreground">{ROLE_HELP[r]}</span>
              </span>
              {r === member.role ? <Check aria-hidden="true" className="mt-0.5 ml-auto" /> : null}
            </DropdownMenuItem>
          ))}
        </DropdownMenuContent>
      </DropdownMenu>
      <ConfirmAction
        open={confirmOwner}
        onOpenChange={setConfirmOwner}
        returnFocusTo={trigger}
        title={`Make ${member.name} an owner?`}
        description={`${member.email} gets full control of the workspace: billing, deleting it, and changing or removing any member, other owners and you included.`}
        confirmLabel="Make owner"
        pendingLabel="Saving…"
        action={changeRoleAction}
        fields={{ slug, workspace_id: workspaceId, user_id: member.userId, role: 'owner' }}
      />
    </>
  );
}

export function RemoveMember({
  slug,
  workspaceId,
  member,
  workspaceName,
}: {
  slug: string;
  workspaceId: string;
  member: { userId: string; email: string; name: string };
  workspaceName: string;
}) {
  return (
    <ConfirmAction
      trigger={
        <Button variant="ghost" size="icon" aria-label={`Remove ${member.email}`}>
          <UserMinus aria-hidden="true" />
        </Button>
      }
      title={`Remove ${member.name}?`}
      description={`${member.email} loses access to ${workspaceName} at once. You can invite them again later.`}
      confirmLabel="Remove member"
      pendingLabel="Removing…"
      action={removeMemberAction}
      fields={{ slug, workspace_id: workspaceId, user_id: member.userId }}
    />
  );
}

export function InvitationActions({
  slug,
  invitation,
}: {
  slug: string;
  invitation: { id: string; email: string };
}) {
  return (
    <div className="flex items-center gap-1">
      <form action={resendInvitationAction}>
        <input type="hidden" name="slug" value={slug} />
        <input type="hidden" name="invitation_id" value={invitation.id} />
        <SubmitButton
          variant="ghost"
          size="sm"
          pendingText="Sending…"
          aria-label={`Resend to ${invitation.email}`}
        >
          Resend
        </SubmitButton>
      </form>
      <ConfirmAction
        trigger={
          <Button variant="ghost" size="sm" aria-label={`Revoke the invitation for ${invitation.email}`}>
            <X aria-hidden="true" />
            Revoke
          </Button>
        }
        title="Revoke this invitation?"
        description={`The link sent to ${invitation.email} stops working. You can invite them again later.`}
        confirmLabel="Revoke invitation"
        pendingLabel="Revoking…"
        action={revokeInvitationAction}
        fields={{ slug, invitation_id: invitation.id }}
      />
    </div>
  );
}

export function LeaveWorkspace({
  slug,
  workspaceId,
  workspaceName,
  lastOwner,
}: {
  slug: string;
  workspaceId: string;
  workspaceName: string;
  lastOwner: boolean;
}) {
  if (lastOwner) {
    return (
      <p className="text-sm text-muted-foreground">
        You are the only owner, so you cannot leave. Make someone else owner first, or delete the workspace in
        Settings.
      </p>
    );
  }
  return (
    <ConfirmAction
      trigger={
        <Button variant="outline">
          <LogOut aria-hidden="true" />
          Leave this workspace
        </Button>
      }
      title={`Leave ${workspaceName}?`}
      description="You lose access at once. To come back, someone has to invite you again."
      confirmLabel="Leave workspace"
      pendingLabel="Leaving…"
      action={leaveWorkspaceAction}
      fields={{ slug, workspace_id: workspaceId }}
    />
  );
}
