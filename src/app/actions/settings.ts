'use server';
// Server actions for workspace settings, the profile and notification preferences. Each
// validates its input, runs as the signed-in user under row-level security (the database decides
// who may change what), and either goes on with a notice or comes back to the form with what was
// wrong and the input kept (useActionState).
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { FieldRefusal, fieldErrorsOf, runForm } from '@/app/lib/actions';
import { emailField, idField, newSlugField, slugField, workspaceName } from '@/app/lib/fields';
import { requestContext } from '@/app/lib/client';
import { confirmUrl, startEmailFlow } from '@/app/lib/email-links';
import { flash } from '@/app/lib/flash';
import { submittedValues, type FormState } from '@/app/lib/form-state';
import { MUTE_PAGE_SIZE } from '@/app/lib/queries/workspaces';
import { isHttpError } from '@/server/http/errors';
import { currentUser, services, storeSession } from '@/app/lib/session';

const workspaceFields = { slug: slugField, workspace_id: idField };

export async function renameWorkspaceAction(_state: FormState, form: FormData): Promise<FormState> {
  const schema = z.object({ ...workspaceFields, name: workspaceName, new_slug: newSlugField });
  const back = `/w/${String(form.get('slug') ?? '')}/settings`;
  return runForm(back, form, schema, async (tx, i) => {
    let r;
    try {
      r = await tx.query<{ slug: string }>(
        'update public.workspaces set name = $2, slug = $3 where id = $1 returning slug',
        [i.workspace_id, i.name, i.new_slug],
      );
    } catch (error) {
      // Taken now, or an old address of another workspace that still leads there (0094).
      const refused = error as { code?: string; constraint?: string };
      if (refused.code === '23505')
        throw new FieldRefusal('new_slug', 'That address is taken; choose another');
      // Every rename keeps the address it leaves; a workspace keeps at most 20 of them (0103).
      if (refused.constraint === 'workspace_old_addresses_limit')
        throw new FieldRefusal(
          'new_slug',
          'This workspace has had 20 other addresses; go back to one of them, or keep this one',
        );
      throw error;
    }
    if (r.rowCount === 0)
      throw Object.assign(new Error('Only admins and owners change workspace settings'), { code: '42501' });
    return { notice: 'Settings saved', redirectTo: `/w/${r.rows[0]!.slug}/settings` };
  });
}

export async function deleteWorkspaceAction(_state: FormState, form: FormData): Promise<FormState> {
  const schema = z.object({
    ...workspaceFields,
    confirm: z.string({ error: 'Type the address to confirm' }),
  });
  const back = `/w/${String(form.get('slug') ?? '')}/settings`;
  return runForm(back, form, schema, async (tx, i) => {
    if (i.confirm.trim() !== i.slug) throw new FieldRefusal('confirm', `Type ${i.slug} to confirm`);
    await tx.query('select public.delete_workspace($1)', [i.workspace_id]);
    return { notice: 'Workspace deleted', redirectTo: '/workspaces' };
  });
}

export async function updateProfileAction(_state: FormState, form: FormData): Promise<FormState> {
  const schema = z.object({
    display_name: z.string().trim().max(100, 'Use at most 100 characters'),
  });
  // The picture is uploaded and saved on its own (actions/files.ts).
  return runForm('/settings/profile', form, schema, async (tx, i) => {
    await tx.query('update public.profiles set display_name = $1 where id = auth.uid()', [
      i.display_name || null,
    ]);
    return { notice: 'Profile saved' };
  });
}

export async function changePasswordAction(_state: FormState, form: FormData): Promise<FormState> {
  const user = await currentUser();
  if (!user) redirect('/sign-in?next=/settings/profile');
  const input = z
    .object({
      current_password: z
        .string()
        .min(1, 'Enter your current password')
        .max(1024, 'Use at most 1024 characters'),
      password: z.string().min(1, 'Enter a new password').max(1024, 'Use at most 1024 characters'),
    })
    .safeParse(Object.fromEntries(form));
  if (!input.success) return { fieldErrors: fieldErrorsOf(input.error) };
  const { identity } = services();
  // Whoever finds a signed-in screen must not take the account over: the service checks the
  // current password as a sign-in is checked, with its backoff after failures.
  try {
    await identity.updateCurrentUser(user.token, {
      password: input.data.password,
      currentPassword: input.data.current_password,
      requireCurrentPassword: true,
      address: (await requestContext()).ip,
    });
  } catch (error) {
    if (isHttpError(error) && error.status === 429) {
      return { fieldErrors: { current_password: error.message } };
    }
    if (isHttpError(error) && error.code === 'current_password_invalid') {
      return { fieldErrors: { current_password: 'That is not your current password' } };
    }
    const message = isHttpError(error) ? error.message : 'Could not change the password; try again';
    return { fieldErrors: { password: message } };
  }
  await flash('notice', 'Password changed');
  redirect('/settings/profile');
}

export async function changeEmailAction(_state: FormState, form: FormData): Promise<FormState> {
  const user = await currentUser();
  if (!user) redirect('/sign-in?next=/settings/profile');
  const values = submittedValues(form);
  const input = z.object({ email: emailField }).safeParse(Object.fromEntries(form));
  if (!input.success) return { fieldErrors: fieldErrorsOf(input.error), values };
  if (input.data.email.toLowerCase() === user.email.toLowerCase()) {
    return { fieldErrors: { email: 'This is already your e-mail address' }, values };
  }
  const { config, identity } = services();
  try {
    await identity.updateCurrentUser(user.token, {
      email: input.data.email,
      pkce: await startEmailFlow(),
      redirectTo: confirmUrl('/settings/profile'),
    });
  } catch (error) {
    const message = isHttpError(error) ? error.message : 'Could not change the e-mail address; try again';
    return { fieldErrors: { email: message }, values };
  }
  await flash(
    'notice',
    config.authEmail.secureEmailChange
      ? `We sent confirmation links to ${user.email} and ${input.data.email}; the address changes once both are confirmed`
      : `We sent a confirmation link to ${input.data.email}; the address changes once it is confirmed`,
  );
  redirect('/settings/profile');
}

/** Withdraws a pending e-mail change: its links and codes stop working, the address stays. */
export async function cancelEmailChangeAction(): Promise<void> {
  const user = await currentUser();
  if (!user) redirect('/sign-in?next=/settings/profile');
  await services().identity.cancelEmailChange(user.token);
  await flash('notice', 'The e-mail change is cancelled; its links no longer work');
  redirect('/settings/profile');
}

/**
 * Saves the digest frequency and, for the workspaces the page showed (`shown`: the settings list
 * them a page at a time), which are left out of the digest; workspaces on other pages keep their
 * setting.
 */
export async function updateNotificationsAction(_state: FormState, form: FormData): Promise<FormState> {
  const stale = 'This page is out of date; reload it and try again';
  const ids = z.array(z.uuid({ error: stale })).max(MUTE_PAGE_SIZE, { error: stale });
  const schema = z.object({
    digest_frequency: z.enum(['off', 'daily', 'weekly'], { error: 'Choose how often' }),
    muted: ids,
    shown: ids,
  });
  const fields = {
    digest_frequency: form.get('digest_frequency'),
    muted: form.getAll('muted').map(String),
    shown: form.getAll('shown').map(String),
  };
  const input = schema.safeParse(fields);
  if (!input.success) return { fieldErrors: fieldErrorsOf(input.error), values: submittedValues(form) };
  const { shown } = input.data;
  const muted = input.data.muted.filter((id) => shown.includes(id));
  const clean = new FormData();
  clean.set('digest_frequency', input.data.digest_frequency);
  return runForm(
    '/settings/notifications',
    clean,
    z.object({ digest_frequency: schema.shape.digest_frequency }),
    async (tx, i) => {
      await tx.query(
        `update public.notification_preferences
         set digest_frequency = $1,
             muted_workspace_ids = array(
               select x from unnest(muted_workspace_ids) x where x <> all($2::uuid[])
               union select unnest($3::uuid[]))
         where user_id = auth.uid()`,
        [i.digest_frequency, shown, muted],
      );
      return { notice: 'Preferences saved' };
    },
  );
}

/**
 * Deletes the signed-in user's own account once they prove it is theirs (the current password, or
 * the address typed out for an account without one), then signs this browser out. A last owner of
 * a team is told what to do first.
 */
export async function deleteAccountAction(_state: FormState, form: FormData): Promise<FormState> {
  const user = await currentUser();
  if (!user) redirect('/sign-in?next=/settings/profile');
  const input = z
    .object({
      account_password: z.string().max(1024, 'Use at most 1024 characters').optional(),
      confirm_email: z.string().max(320, 'Use at most 320 characters').optional(),
    })
    .safeParse(Object.fromEntries(form));
  if (!input.success) return { fieldErrors: fieldErrorsOf(input.error) };
  try {
    await services().identity.deleteOwnAccount(user.token, {
      currentPassword: input.data.account_password ?? null,
      email: input.data.confirm_email ?? null,
      address: (await requestContext()).ip,
    });
  } catch (error) {
    if (!isHttpError(error)) return { error: 'Could not delete the account; try again' };
    if (error.status === 429) return { fieldErrors: { account_password: error.message } };
    switch (error.code) {
      case 'current_password_required':
        return { fieldErrors: { account_password: 'Enter your current password' } };
      case 'current_password_invalid':
        return { fieldErrors: { account_password: 'That is not your current password' } };
      case 'email_mismatch':
        return { fieldErrors: { confirm_email: `Type ${user.email} to confirm` } };
      case 'insufficient_aal':
        return { error: 'Sign in again with your authenticator app code, then delete the account' };
      default:
        return { error: error.message };
    }
  }
  await storeSession(null);
  await flash('notice', 'Your account has been deleted');
  redirect('/sign-in');
}
