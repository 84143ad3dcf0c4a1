// In charge of reading workspaces for pages: the signed-in user's list (for the switcher and the
// workspaces page), one workspace by its address, and where a renamed workspace's old address
// leads. Everything runs as the user, under row-level security.
import { cache } from 'react';
import { asUser } from '@/app/lib/db';
import type { SignedIn } from '@/app/lib/session';

export type Role = 'owner' | 'admin' | 'member' | 'viewer';

export interface WorkspaceSummary {
  id: string;
  name: string;
  slug: string;
  role: Role;
  members: number;
  projects: number;
}

export interface WorkspaceAccess {
  id: string;
  name: string;
  slug: string;
  role: Role;
  /** the last payment failed and is still unpaid */
  pastDue: boolean;
  /** members must pass two-step verification to see it */
  requireMfa: boolean;
}

/** A workspace of the user hidden until they pass two-step verification (it requires it). */
export interface LockedWorkspace {
  id: string;
  name: string;
  slug: string;
}

/** The user's workspaces that require two-step verification the session has not passed. */
export const myLockedWorkspaces = cache(async (user: SignedIn): Promise<LockedWorkspace[]> =>
  asUser(user, async (tx) => {
    const r = await tx.query<LockedWorkspace>(
      'select id, name, slug from internal.my_mfa_locked_workspaces()',
    );
    return r.rows;
  }),
);

/** The user's workspaces with their role and sizes, by name. Once per request. */
export const myWorkspaces = cache(async (user: SignedIn): Promise<WorkspaceSummary[]> =>
  asUser(user, async (tx) => {
    const r = await tx.query<WorkspaceSummary>(
      `select w.id, w.name, w.slug, m.role,
              (select count(*) from public.workspace_members x where x.workspace_id = w.id)::int as members,
              (select count(*) from public.projects p where p.workspace_id = w.id)::int as projects
       from public.workspaces w
       join public.workspace_members m on m.workspace_id = w.id and m.user_id = auth.uid()
       order by lower(w.name), w.slug`,
    );
    return r.rows;
  }),
);

/** The workspace with this slug if the user belongs to it; null otherwise (never revealing which). */
export const workspaceBySlug = cache(async (user: SignedIn, slug: string): Promise<WorkspaceAccess | null> =>
  asUser(user, async (tx) => {
    const r = await tx.query<WorkspaceAccess>(
      `select w.id, w.name, w.slug, m.role, coalesce(s.past_due_since is not null, false) as "pastDue",
              w.require_mfa as "requireMfa"
       from public.workspaces w
       join public.workspace_members m on m.workspace_id = w.id and m.user_id = auth.uid()
       left join public.subscriptions s on s.workspace_id = w.id
       where w.slug = $1`,
      [slug],
    );
    return r.rows[0] ?? null;
  }),
);

/** The current slug of a workspace the user is in that used to be at `slug`, if any. */
export async function renamedSlug(user: SignedIn, slug: string): Promise<string | null> {
  return asUser(user, async (tx) => {
    const r = await tx.query<{ slug: string | null }>('select internal.renamed_workspace_slug($1) as slug', [
      slug,
    ]);
    return r.rows[0]?.slug ?? null;
  });
}
