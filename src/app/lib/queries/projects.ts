// In charge of reading a workspace's projects for its overview page, a page at a time, newest
// first, searchable by name.
import { asUser } from '@/app/lib/db';
import { containsPattern, lastPage, paged, pageWindow, type PageRequest, type Paged } from '@/app/lib/paging';
import type { SignedIn } from '@/app/lib/session';

export interface ProjectRow {
  id: string;
  name: string;
  createdAt: Date;
  createdBy: string | null;
}

export const PROJECTS_PAGE_SIZE = 20;

export async function listProjects(
  user: SignedIn,
  workspaceId: string,
  request: PageRequest,
): Promise<Paged<ProjectRow>> {
  const size = PROJECTS_PAGE_SIZE;
  return asUser(user, async (tx) => {
    const pattern = request.q ? containsPattern(request.q) : null;
    const counted = await tx.query<{ n: number }>(
      `select count(*)::int as n from public.projects p
       where p.workspace_id = $1 and ($2::text is null or p.name ilike $2)`,
      [workspaceId, pattern],
    );
    const total = counted.rows[0]?.n ?? 0;
    const at = { ...request, page: Math.min(request.page, lastPage(total, size)) };
    const { limit, offset } = pageWindow(at, size);
    const r = await tx.query<ProjectRow>(
      `select p.id, p.name, p.created_at as "createdAt", coalesce(u.display_name, u.email) as "createdBy"
       from public.projects p left join public.profiles u on u.id = p.created_by
       where p.workspace_id = $1 and ($2::text is null or p.name ilike $2)
       order by p.created_at desc, p.id
       limit $3 offset $4`,
      [workspaceId, pattern, limit, offset],
    );
    return paged(r.rows, at, size, total);
  });
}
