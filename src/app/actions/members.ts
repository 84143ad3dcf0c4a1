'use server';
// Server actions for members and invitations. Each validates its input, runs the database
// operation as the signed-in user (the database enforces who may do what), and returns to the
// page with a notice or a clear refusal.
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { asUser, refusalMessage } from '@/app/lib/db';
import { runAction } from '@/app/lib/actions';
import { flash } from '@/app/lib/flash';
import { currentUser } from '@/app/lib/session';

const uuid = z.uuid();
const role = z.enum(['viewer', 'member', 'admin', 'owner']);

const back = (slug: string) => `/w/${encodeURIComponent(slug)}/members`;
const slugField = z.string().regex(/^[a-z0-9-]{1,48}$/);

export async function inviteAction(form: FormData) {
  const schema = z.object({
    slug: slugField,
    workspace_id: uuid,
    email: z
      .string()
      .trim()
      .pipe(z.email({ error: 'Enter a valid e-mail address' })),
    role,
  });
  const slug = String(form.get('slug') ?? '');
  await runAction(back(slug), form, schema, async (tx, i) => {
    await tx.query('select public.invite_member($1, $2, $3)', [i.workspace_id, i.email, i.role]);
    return { notice: 'Invitation sent' };
  });
}

export async function resendInvitationAction(form: FormData) {
  const schema = z.object({ slug: slugField, invitation_id: uuid });
  await runAction(back(String(form.get('slug') ?? '')), form, schema, async (tx, i) => {
    await tx.query('select public.resend_invitation($1)', [i.invitation_id]);
    return { notice: 'Invitation sent again with a new link' };
  });
}

export async function revokeInvitationAction(form: FormData) {
  const schema = z.object({ slug: slugField, invitation_id: uuid });
  await runAction(back(String(form.get('slug') ?? '')), form, schema, async (tx, i) => {
    await tx.query('select public.revoke_invitation($1)', [i.invitation_id]);
    return { notice: 'Invitation revoked' };
  });
}

export async function changeRoleAction(form: FormData) {
  const schema = z.object({ slug: slugField, workspace_id: uuid, user_id: uuid, role });
  await runAction(back(String(form.get('slug') ?? '')), form, schema, async (tx, i) => {
    await tx.query('select public.update_member_role($1, $2, $3)', [i.workspace_id, i.user_id, i.role]);
    return { notice: 'Role changed' };
  });
}

export async function removeMemberAction(form: FormData) {
  const schema = z.object({ slug: slugField, workspace_id: uuid, user_id: uuid });
  await runAction(back(String(form.get('slug') ?? '')), form, schema, async (tx, i) => {
    await tx.query('select public.remove_member($1, $2)', [i.workspace_id, i.user_id]);
    return { notice: 'Member removed' };
  });
}

export async function leaveWorkspaceAction(form: FormData) {
  const user = await currentUser();
  if (!user) redirect('/sign-in');
  const input = z.object({ slug: slugField, workspace_id: uuid }).safeParse(Object.fromEntries(form));
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
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(`/invitations/accept?token=${token}`)}`);
  try {
    await asUser(user, (tx) => tx.query('select public.decline_invitation($1)', [token]));
  } catch (error) {
    await flash('error', refusalMessage(error));
    redirect(`/invitations/accept?token=${encodeURIComponent(token)}`);
  }
  await flash('notice', 'Invitation declined');
  redirect('/workspaces');
}
