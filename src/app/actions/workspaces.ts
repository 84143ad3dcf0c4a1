'use server';
// Server actions for workspaces. Each validates its input, runs the database operation as the
// signed-in user under row-level security, and returns to the page with a clear message.
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { withRls } from '@/server/db/transactions';
import { getRuntime } from '@/server/runtime';
import { currentUser } from '@/app/lib/session';
import { refusalMessage } from '@/app/lib/db';
import { flash } from '@/app/lib/flash';

const createInput = z.object({
  name: z.string().trim().min(1, 'Give the workspace a name').max(100, 'Names are at most 100 characters'),
});

export async function createWorkspaceAction(form: FormData) {
  const user = await currentUser();
  if (!user) redirect('/sign-in?next=/workspaces');
  const input = createInput.safeParse(Object.fromEntries(form));
  if (!input.success) {
    await flash('error', input.error.issues[0]!.message);
    redirect('/workspaces');
  }
  try {
    await withRls(getRuntime().pool, user.claims, (tx) =>
      tx.query('select public.create_workspace($1)', [input.data.name]),
    );
  } catch (error) {
    await flash('error', refusalMessage(error));
    redirect('/workspaces');
  }
  await flash('notice', 'Workspace created');
  redirect('/workspaces');
}

const projectInput = z.object({
  slug: z.string().regex(/^[a-z0-9-]{1,48}$/),
  workspace_id: z.uuid(),
  name: z.string().trim().min(1, 'Give the project a name').max(200),
});

export async function createProjectAction(form: FormData) {
  const slug = String(form.get('slug') ?? '');
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=/w/${encodeURIComponent(slug)}`);
  const input = projectInput.safeParse(Object.fromEntries(form));
  if (!input.success) {
    await flash('error', input.error.issues[0]!.message);
    redirect(`/w/${encodeURIComponent(slug)}`);
  }
  try {
    await withRls(getRuntime().pool, user.claims, (tx) =>
      tx.query('insert into public.projects (workspace_id, name) values ($1, $2)', [
        input.data.workspace_id,
        input.data.name,
      ]),
    );
  } catch (error) {
    await flash('error', refusalMessage(error));
    redirect(`/w/${encodeURIComponent(slug)}`);
  }
  await flash('notice', 'Project created');
  redirect(`/w/${encodeURIComponent(slug)}`);
}
