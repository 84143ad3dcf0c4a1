'use server';
// Server actions for members and invitations. Each validates its input, runs the database
// operation as the signed-in user (the database enforces who may do what), and goes on with a
// notice, or comes back with a clear refusal: in the invite form (useActionState), or as a toast.
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { asUser, refusalMessage } from '@/app/lib/db';
import { FieldRefusal, runAction, runForm } from '@/app/lib/actions';
import { emailField, idField, roleField, slugField } from '@/app/lib/fields';
import { flash } from '@/app/lib/flash';
import type { FormState } from '@/app/lib/form-state';
import { currentUser } from '@/app/lib/session';

const back = (slug: string) => `/w/${encodeURIComponent(slug)}/members`;
const slugOf = (form: FormData) => String(form.get('slug') ?? '');

export async function inviteAction(_state: FormState, form: FormData): Promise<FormState> {
  const schema = z.object({ slug: slugField, workspace_id: idField, email: emailField, role: roleField });
  return runForm(back(slugOf(form)), form, schema, async (tx, i) => {
    try {
      await tx.query('select public.invite_member($1, $2, $3)', [i.workspace_id, i.email, i.role]);
    } catch (error) {
      const e = error as { code?: string; message?: string };
      if (e.code === '23505' || (e.code === '22023' && /e-mail/i.test(e.message ?? '')))
        throw new FieldRefusal('email', refusalMessage(error));
      throw error;
    }
    return { notice: `Invitation sent to ${i.email}` };
  });
}

export async function resendInvitationAction(form: FormData) {
  const schema = z.object({ slug: slugField, invitation_id: idField });
  await runAction(back(slugOf(form)), form, schema, async (tx, i) => {
    await tx.query('select public.resend_invitation($1)', [i.invitation_id]);
    return { notice: 'Invitation sent again with a new link' };
  });
}

export async function revokeInvitationAction(form: FormData) {
  const schema = z.object({ slug: slugField, invitation_id: idField });
  await runAction(back(slugOf(form)), form, schema, async (tx, i) => {
    await tx.query('select public.revoke_invitation($1)', [i.invitation_id]);
    return { notice: 'Invitation revoked' };
  });
}

export async function changeRoleAction(form: FormData) {
  const schema = z.object({ slug: slugField, workspace_id: idField, user_id: idField, role: roleField });
  await runAction(back(slugOf(form)), form, schema, async (tx, i) => {
    await tx.query('select public.update_member_role($1, $2, $3)', [i.workspace_id, i.user_id, i.role]);
    return { notice: `Role changed to ${i.role}` };
  });
}

export async function removeMemberAction(form: FormData) {
  const schema = z.object({ slug: slugField, workspace_id: idField, user_id: idField });
  await runAction(back(slugOf(form)), form, schema, async (tx, i) => {
    await tx.query('select public.remove_member($1, $2)', [i.workspace_id, i.user_id]);
    return { notice: 'Member removed' };
  });
}

export async function leaveWorkspaceAction(form: FormData) {
  const user = await currentUser();
  if (!user) redirect('/sign-in');
  const input = z.object({ slug: slugField, workspace_id: idField }).safeParse(Object.fromEntries(form));
  if (!input.success) redirect('/workspaces');
  try {
    await asUser(user, (tx) => tx.query('select public.leave_workspace($1)', [input.data.workspace_id]));
  } catch (error) {
    await flash('error', refusalMessage(error));
    redirect(back(input.data.slug));
  }
  await flash('notice', 'You left the workspace');
  redirect('/workspaces');
}

export async function acceptInvitationAction(form: FormData) {
  const token = String(form.get('token') ?? '');
  const here = `/invitations/accept?token=${encodeURIComponent(token)}`;
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(here)}`);
  let slug = '';
  try {
    slug = await asUser(user, async (tx) => {
      const accepted = await tx.query<{ result: { workspace_id: string } }>(
        'select public.accept_invitation($1) as result',
        [token],
      );
      const r = await tx.query<{ slug: string }>('select slug from public.workspaces where id = $1', [
        accepted.rows[0]!.result.workspace_id,
      ]);
      return r.rows[0]!.slug;
    });
  } catch (error) {
    await flash('error', refusalMessage(error));
    redirect(here);
  }
  await flash('notice', 'Welcome to the workspace');
  redirect(`/w/${encodeURIComponent(slug)}`);
}

export async function declineInvitationAction(form: FormData) {
  const token = String(form.get('token') ?? '');
  const here = `/invitations/accept?token=${encodeURIComponent(token)}`;
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(here)}`);
  try {
    await asUser(user, (tx) => tx.query('select public.decline_invitation($1)', [token]));
  } catch (error) {
    await flash('error', refusalMessage(error));
    redirect(here);
  }
  await flash('notice', 'Invitation declined');
  redirect('/workspaces');
}
