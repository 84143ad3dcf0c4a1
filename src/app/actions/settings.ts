'use server';
// Server actions for workspace settings, projects, the profile and notification preferences.
// Each validates its input, runs as the signed-in user under row-level security (the database
// decides who may change what) and returns to its page with a notice or a clear refusal.
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { runAction as run } from '@/app/lib/actions';
import { flash } from '@/app/lib/flash';
import { currentUser, services } from '@/app/lib/session';

const slug = z.string().regex(/^[a-z0-9-]{1,48}$/);
const workspaceFields = { slug, workspace_id: z.uuid() };

export async function renameWorkspaceAction(form: FormData) {
  const schema = z.object({
    ...workspaceFields,
    name: z.string().trim().min(1, 'Give the workspace a name').max(100),
    new_slug: z
      .string()
      .trim()
      .toLowerCase()
      .regex(/^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$/, 'Slugs use a-z, 0-9 and dashes'),
  });
  const back = `/w/${String(form.get('slug') ?? '')}/settings`;
  await run(back, form, schema, async (tx, i) => {
    const r = await tx.query<{ slug: string }>(
      'update public.workspaces set name = $2, slug = $3 where id = $1 returning slug',
      [i.workspace_id, i.name, i.new_slug],
    );
    if (r.rowCount === 0)
      throw Object.assign(new Error('Only admins and owners change workspace settings'), { code: '42501' });
    return { notice: 'Saved', redirectTo: `/w/${r.rows[0]!.slug}/settings` };
  });
}

export async function deleteWorkspaceAction(form: FormData) {
  const schema = z.object({ ...workspaceFields, confirm: z.string() });
  const back = `/w/${String(form.get('slug') ?? '')}/settings`;
  await run(back, form, schema, async (tx, i) => {
    if (i.confirm !== i.slug) throw Object.assign(new Error(`Type ${i.slug} to confirm`), { code: '22023' });
    await tx.query('select public.delete_workspace($1)', [i.workspace_id]);
    return { notice: 'Workspace deleted', redirectTo: '/workspaces' };
  });
}

export async function updateProjectAction(form: FormData) {
  const schema = z.object({ slug, project_id: z.uuid(), name: z.string().trim().min(1).max(200) });
  await run(`/w/${String(form.get('slug') ?? '')}`, form, schema, async (tx, i) => {
    const r = await tx.query('update public.projects set name = $2 where id = $1', [i.project_id, i.name]);
    if (r.rowCount === 0) throw Object.assign(new Error('Viewers cannot change projects'), { code: '42501' });
    return { notice: 'Project renamed' };
  });
}

export async function deleteProjectAction(form: FormData) {
  const schema = z.object({ slug, project_id: z.uuid() });
  await run(`/w/${String(form.get('slug') ?? '')}`, form, schema, async (tx, i) => {
    const r = await tx.query('delete from public.projects where id = $1', [i.project_id]);
    if (r.rowCount === 0) throw Object.assign(new Error('Viewers cannot delete projects'), { code: '42501' });
    return { notice: 'Project deleted' };
  });
}

export async function updateProfileAction(form: FormData) {
  const schema = z.object({
    display_name: z.string().trim().max(100, 'At most 100 characters'),
    avatar_url: z.union([z.literal(''), z.url({ protocol: /^https?$/, error: 'Use an http(s) address' })]),
  });
  await run('/settings/profile', form, schema, async (tx, i) => {
    await tx.query('update public.profiles set display_name = $1, avatar_url = $2 where id = auth.uid()', [
      i.display_name || null,
      i.avatar_url || null,
    ]);
    return { notice: 'Profile saved' };
  });
}

export async function changePasswordAction(form: FormData) {
  const user = await currentUser();
  if (!user) redirect('/sign-in?next=/settings/profile');
  const input = z.object({ password: z.string().min(1).max(1024) }).safeParse(Object.fromEntries(form));
  if (!input.success) {
    await flash('error', 'Enter a new password');
    redirect('/settings/profile');
  }
  try {
    await services().identity.updateCurrentUser(user.claims as never, { password: input.data.password });
  } catch (error) {
    await flash('error', (error as { message?: string }).message ?? 'Could not change the password');
    redirect('/settings/profile');
  }
  await flash('notice', 'Password changed');
  redirect('/settings/profile');
}

export async function updateNotificationsAction(form: FormData) {
  const schema = z.object({ digest_frequency: z.enum(['off', 'daily', 'weekly']) });
  const muted = form.getAll('muted').map(String);
  await run('/settings/notifications', form, schema, async (tx, i) => {
    const ids = z.array(z.uuid()).parse(muted);
    await tx.query(
      'update public.notification_preferences set digest_frequency = $1, muted_workspace_ids = $2 where user_id = auth.uid()',
      [i.digest_frequency, ids],
    );
    return { notice: 'Preferences saved' };
  });
}
