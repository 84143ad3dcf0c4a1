'use server';
// Server actions for workspaces and their projects. Each validates its input, runs the database
// operation as the signed-in user under row-level security, and either opens the result with a
// notice or comes back to the form with what was wrong (useActionState).
import { z } from 'zod';
import { runAction, runForm } from '@/app/lib/actions';
import { idField, projectName, slugField, workspaceName } from '@/app/lib/fields';
import type { FormState } from '@/app/lib/form-state';

const createInput = z.object({ name: workspaceName });

/** Creates a workspace with the user as owner, and opens it. */
export async function createWorkspaceAction(_state: FormState, form: FormData): Promise<FormState> {
  return runForm('/workspaces', form, createInput, async (tx, i) => {
    const r = await tx.query<{ slug: string }>('select slug from public.create_workspace($1)', [i.name]);
    const slug = r.rows[0]!.slug;
    return { notice: `Workspace ${i.name} created`, redirectTo: `/w/${slug}` };
  });
}

const projectInput = z.object({ slug: slugField, workspace_id: idField, name: projectName });

export async function createProjectAction(_state: FormState, form: FormData): Promise<FormState> {
  const back = `/w/${String(form.get('slug') ?? '')}`;
  return runForm(back, form, projectInput, async (tx, i) => {
    await tx.query('insert into public.projects (workspace_id, name) values ($1, $2)', [
      i.workspace_id,
      i.name,
    ]);
    return { notice: 'Project created' };
  });
}

const renameInput = z.object({ slug: slugField, project_id: idField, name: projectName });

export async function renameProjectAction(_state: FormState, form: FormData): Promise<FormState> {
  return runForm(`/w/${String(form.get('slug') ?? '')}`, form, renameInput, async (tx, i) => {
    const r = await tx.query('update public.projects set name = $2 where id = $1', [i.project_id, i.name]);
    if (r.rowCount === 0) throw Object.assign(new Error('Viewers cannot change projects'), { code: '42501' });
    return { notice: 'Project renamed' };
  });
}

export async function deleteProjectAction(form: FormData) {
  const schema = z.object({ slug: slugField, project_id: idField });
  await runAction(`/w/${String(form.get('slug') ?? '')}`, form, schema, async (tx, i) => {
    const r = await tx.query('delete from public.projects where id = $1', [i.project_id]);
    if (r.rowCount === 0) throw Object.assign(new Error('Viewers cannot delete projects'), { code: '42501' });
    return { notice: 'Project deleted' };
  });
}
