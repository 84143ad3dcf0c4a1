// In charge of reading a workspace's projects for its overview page.
import { asUser } from '@/app/lib/db';
import type { SignedIn } from '@/app/lib/session';

export interface ProjectRow {
  id: string;
  name: string;
  createdAt: Date;
  createdBy: string | null;
}

export const PROJECTS_SHOWN = 100;

export async function listProjects(user: SignedIn, workspaceId: string): Promise<ProjectRow[]> {
  return asUser(user, async (tx) => {
    const r = await tx.query<ProjectRow>(
      `select p.id, p.name, p.created_at as "createdAt", coalesce(u.display_name, u.email) as "createdBy"
       from public.projects p left join public.profiles u on u.id = p.created_by
       where p.workspace_id = $1 order by p.created_at desc, p.id limit $2`,
      [workspaceId, PROJECTS_SHOWN],
    );
    return r.rows;
  });
}
