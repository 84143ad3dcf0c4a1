// In charge of reading a project for its page and the files attached to it (newest first, a
// bounded list), with who added each, under the viewer's row-level security: a workspace's
// readers see its projects' files, nobody else does. Each file comes with a download address
// signed for the viewer.
import { asUser } from '@/app/lib/db';
import { APP_BUCKETS, readableUrls } from '@/app/lib/files';
import type { SignedIn } from '@/app/lib/session';

export interface Project {
  id: string;
  name: string;
  description: string | null;
  createdAt: Date;
  createdBy: string | null;
}

export interface ProjectFile {
  /** the object's name in the project-files bucket */
  name: string;
  /** the file's name as it was chosen */
  fileName: string;
  size: number;
  type: string | null;
  uploadedBy: string | null;
  uploadedAt: Date;
  downloadUrl: string | null;
}

/** How many files a project's page lists (the newest); the rest are said to exist. */
export const PROJECT_FILES_SHOWN = 100;

export async function projectById(user: SignedIn, workspaceId: string, id: string): Promise<Project | null> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
  return asUser(user, async (tx) => {
    const r = await tx.query<Project>(
      `select p.id, p.name, p.description, p.created_at as "createdAt", coalesce(u.display_name, u.email) as "createdBy"
       from public.projects p left join public.profiles u on u.id = p.created_by
       where p.workspace_id = $1 and p.id = $2`,
      [workspaceId, id],
    );
    return r.rows[0] ?? null;
  });
}

export async function listProjectFiles(
  user: SignedIn,
  workspaceId: string,
  projectId: string,
): Promise<{ files: ProjectFile[]; more: boolean }> {
  const rows = await asUser(user, async (tx) => {
    const r = await tx.query<Omit<ProjectFile, 'downloadUrl'>>(
      `select o.name,
              left(coalesce(nullif(o.user_metadata ->> 'name', ''), storage.filename(o.name)), 255) as "fileName",
              coalesce((o.metadata ->> 'size')::float8, 0) as size, o.metadata ->> 'mimetype' as type,
              coalesce(u.display_name, u.email) as "uploadedBy", o.created_at as "uploadedAt"
       from storage.objects o left join public.profiles u on u.id::text = o.owner_id
       where o.bucket_id = $1 and o.name like $2
       order by o.created_at desc, o.name
       limit $3`,
      [APP_BUCKETS.projectFiles, `${workspaceId}/${projectId}/%`, PROJECT_FILES_SHOWN + 1],
    );
    return r.rows;
  });
  const shown = rows.slice(0, PROJECT_FILES_SHOWN);
  const byName = new Map(shown.map((f) => [f.name, f.fileName]));
  const urls = await readableUrls(
    user,
    APP_BUCKETS.projectFiles,
    shown.map((f) => f.name),
    (name) => byName.get(name) ?? 'download',
  );
  return {
    files: shown.map((f) => ({ ...f, downloadUrl: urls.get(f.name) ?? null })),
    more: rows.length > PROJECT_FILES_SHOWN,
  };
}
