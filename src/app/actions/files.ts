'use server';
// Server actions for files in the app: profile pictures, workspace logos and project
// attachments. The bytes never pass through here: an action checks the file against where it is
// going (type, size, the plan's bytes left), asks storage for an upload address signed for the
// signed-in user once their policies allow the write, and the browser sends the file there. Then
// an action records the picture (the database checks it was uploaded) or reports what arrived.
// Deleting runs as the user under row-level security; the bytes follow from the deletion queue.
import { randomBytes } from 'node:crypto';
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { runAction } from '@/app/lib/actions';
import { asUser, refusalMessage } from '@/app/lib/db';
import { refusalFor } from '@/app/lib/file-checks';
import { APP_BUCKETS, PICTURE_TYPES, signedUploadUrl, uploadLimits } from '@/app/lib/files';
import { idField, slugField } from '@/app/lib/fields';
import { flash } from '@/app/lib/flash';
import { currentUser, type SignedIn } from '@/app/lib/session';
import { isStorageError } from '@/server/storage/errors';
import { count } from '@/server/text/counts';

/** Where the browser sends one file, or why it may not. */
export type PreparedUpload = { ok: true; url: string; path: string } | { ok: false; error: string };

const EXTENSION: Record<string, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

async function signedIn(back: string): Promise<SignedIn> {
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(back)}`);
  return user;
}

/** A fresh name for an upload: never an existing one, so nothing is overwritten by accident. */
function freshName(): string {
  return randomBytes(9).toString('base64url');
}

/** Storage's refusal, in words for the person (storage writes its messages for developers). */
function uploadRefusal(error: unknown): string {
  if (isStorageError(error)) {
    if (error.statusCode === 403) return 'Not allowed: your role does not let you add files here';
    if (error.statusCode === 413) return error.message;
    if (error.statusCode === 415) return 'Files of this type cannot be added here';
    return 'The file could not be added; try again';
  }
  return refusalMessage(error);
}

async function prepare(
  user: SignedIn,
  bucket: string,
  path: string,
  size: number,
  type: string,
): Promise<PreparedUpload> {
  try {
    const refused = refusalFor(await uploadLimits(bucket, path), size, type);
    if (refused) return { ok: false, error: refused };
    return { ok: true, url: await signedUploadUrl(user, bucket, path), path };
  } catch (error) {
    return { ok: false, error: uploadRefusal(error) };
  }
}

const pictureFile = z.object({
  type: z.enum(PICTURE_TYPES as [string, ...string[]], { error: 'Choose a PNG, JPEG or WebP picture' }),
  size: z.number().int().min(1, 'The picture is empty').max(Number.MAX_SAFE_INTEGER),
});

/** Where to send the cropped profile picture. */
export async function prepareAvatarUpload(file: { type: string; size: number }): Promise<PreparedUpload> {
  const user = await signedIn('/settings/profile');
  const input = pictureFile.safeParse(file);
  if (!input.success) return { ok: false, error: input.error.issues[0]!.message };
  const path = `${user.userId}/${freshName()}.${EXTENSION[input.data.type]}`;
  return prepare(user, APP_BUCKETS.avatars, path, input.data.size, input.data.type);
}

/** Makes the uploaded picture the profile's (the database checks it is the user's and was uploaded). */
export async function saveAvatarAction(path: string): Promise<{ error: string }> {
  const user = await signedIn('/settings/profile');
  const input = z.string().max(200).safeParse(path);
  if (!input.success || !input.data.startsWith(`${user.userId}/`)) {
    return { error: 'The picture was not uploaded; upload it again' };
  }
  try {
    await asUser(user, (tx) =>
      tx.query('update public.profiles set avatar_path = $1 where id = auth.uid()', [input.data]),
    );
  } catch (error) {
    return { error: refusalMessage(error) };
  }
  await flash('notice', 'Profile picture saved');
  redirect('/settings/profile');
}

export async function removeAvatarAction(): Promise<void> {
  const user = await signedIn('/settings/profile');
  await asUser(user, (tx) =>
    tx.query('update public.profiles set avatar_path = null, avatar_url = null where id = auth.uid()'),
  );
  await flash('notice', 'Profile picture removed; your initials are shown instead');
  redirect('/settings/profile');
}

/** Where to send the workspace's new logo (admins and owners only: the bucket's policies decide). */
export async function prepareLogoUpload(
  workspaceId: string,
  file: { type: string; size: number },
): Promise<PreparedUpload> {
  const user = await signedIn('/workspaces');
  const id = idField.safeParse(workspaceId);
  const input = pictureFile.safeParse(file);
  if (!id.success) return { ok: false, error: 'Reload the page and try again' };
  if (!input.success) return { ok: false, error: input.error.issues[0]!.message };
  const path = `${id.data}/${freshName()}.${EXTENSION[input.data.type]}`;
  return prepare(user, APP_BUCKETS.logos, path, input.data.size, input.data.type);
}

export async function saveLogoAction(
  workspaceId: string,
  slug: string,
  path: string,
): Promise<{ error: string }> {
  const input = z
    .object({ workspace_id: idField, slug: slugField, path: z.string().max(200) })
    .safeParse({ workspace_id: workspaceId, slug, path });
  const back = input.success ? `/w/${input.data.slug}/settings` : '/workspaces';
  const user = await signedIn(back);
  if (!input.success || !input.data.path.startsWith(`${input.data.workspace_id}/`)) {
    return { error: 'The logo was not uploaded; upload it again' };
  }
  const { workspace_id: id, path: name } = input.data;
  try {
    const r = await asUser(user, (tx) =>
      tx.query('update public.workspaces set logo_path = $2 where id = $1', [id, name]),
    );
    if (r.rowCount === 0) return { error: 'Not allowed: only admins and owners change the logo' };
  } catch (error) {
    return { error: refusalMessage(error) };
  }
  await flash('notice', 'Logo saved');
  redirect(back);
}

export async function removeLogoAction(form: FormData): Promise<void> {
  const schema = z.object({ slug: slugField, workspace_id: idField });
  await runAction(`/w/${String(form.get('slug') ?? '')}/settings`, form, schema, async (tx, i) => {
    const r = await tx.query('update public.workspaces set logo_path = null where id = $1', [i.workspace_id]);
    if (r.rowCount === 0)
      throw Object.assign(new Error('Only admins and owners change the logo'), { code: '42501' });
    return { notice: 'Logo removed' };
  });
}

/** A file's name as storage takes it: its own characters where storage allows them, `_` elsewhere. */
function storedFileName(name: string): string {
  const safe = name
    .normalize('NFKD')
    .replace(/[^\w !\-.*'()&$@=;:+,]/g, '_')
    .replace(/^[.\s]+/, '_')
    .trim()
    .slice(-120);
  return safe || 'file';
}

const MAX_FILES_AT_ONCE = 20;

const projectUploads = z.object({
  workspace_id: idField,
  project_id: idField,
  files: z
    .array(
      z.object({
        name: z.string().min(1).max(1000),
        size: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
        type: z.string().max(255),
      }),
    )
    .min(1, 'Choose a file')
    .max(MAX_FILES_AT_ONCE, `Add at most ${MAX_FILES_AT_ONCE} files at once`),
});

/** Where to send each file for a project, or why that one may not go (the others still may). */
export async function prepareProjectUploads(
  workspaceId: string,
  projectId: string,
  files: { name: string; size: number; type: string }[],
): Promise<PreparedUpload[] | { error: string }> {
  const user = await signedIn('/workspaces');
  const input = projectUploads.safeParse({ workspace_id: workspaceId, project_id: projectId, files });
  if (!input.success) return { error: input.error.issues[0]?.message ?? 'Reload the page and try again' };
  const { workspace_id: ws, project_id: project } = input.data;
  const prepared: PreparedUpload[] = [];
  for (const file of input.data.files) {
    const path = `${ws}/${project}/${freshName()}/${storedFileName(file.name)}`;
    prepared.push(await prepare(user, APP_BUCKETS.projectFiles, path, file.size, file.type));
  }
  return prepared;
}

/** After the browser sent a project's files: the page shows them, with how many arrived. */
export async function projectUploadsDone(slug: string, projectId: string, added: number): Promise<void> {
  const input = z
    .object({ slug: slugField, project_id: idField, added: z.number().int().min(0).max(MAX_FILES_AT_ONCE) })
    .safeParse({ slug, project_id: projectId, added });
  if (!input.success) redirect('/workspaces');
  const back = `/w/${input.data.slug}/projects/${input.data.project_id}`;
  await signedIn(back);
  if (input.data.added > 0) {
    await flash('notice', input.data.added === 1 ? 'File added' : `${count(input.data.added, 'file')} added`);
  }
  redirect(back);
}

export async function deleteProjectFileAction(form: FormData): Promise<void> {
  const schema = z.object({
    slug: slugField,
    workspace_id: idField,
    project_id: idField,
    name: z.string({ error: 'Reload the page and try again' }).min(1).max(1024),
  });
  const back = `/w/${String(form.get('slug') ?? '')}/projects/${String(form.get('project_id') ?? '')}`;
  await runAction(back, form, schema, async (tx, i) => {
    // Only a file of this project: the name is checked against the page's project.
    if (!i.name.startsWith(`${i.workspace_id}/${i.project_id}/`))
      throw Object.assign(new Error('That file is not part of this project'), { code: 'PT404' });
    const r = await tx.query(`delete from storage.objects where bucket_id = $1 and name = $2`, [
      APP_BUCKETS.projectFiles,
      i.name,
    ]);
    if (r.rowCount === 0)
      throw Object.assign(new Error('Viewers cannot delete files, or it was already deleted'), {
        code: '42501',
      });
    return { notice: 'File deleted' };
  });
}
