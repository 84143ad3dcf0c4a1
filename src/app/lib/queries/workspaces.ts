// In charge of reading workspaces for pages: the signed-in user's workspaces a page at a time (the
// workspaces page, with its search), the few the switcher offers, one workspace by its address,
// and where a renamed workspace's old address leads. No read returns an unbounded list: an account
// may be in thousands of workspaces. Everything runs as the user, under row-level security.
import { cache } from 'react';
import { asUser } from '@/app/lib/db';
import {
  containsPattern,
  firstOf,
  lastPage,
  paged,
  pageWindow,
  type PageRequest,
  type Paged,
} from '@/app/lib/paging';
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
  /** the logo's name in the workspace-logos bucket, or null */
  logoPath: string | null;
}

/** A workspace of the user hidden until they pass two-step verification (it requires it). */
export interface LockedWorkspace {
  id: string;
  name: string;
  slug: string;
}

/** How many workspaces waiting for two-step verification a page names. */
export const LOCKED_SHOWN = 10;

/**
 * The user's workspaces that require two-step verification the session has not passed: the first
 * LOCKED_SHOWN by name, and whether there are more.
 */
export const myLockedWorkspaces = cache(
  async (user: SignedIn): Promise<{ items: LockedWorkspace[]; more: boolean }> =>
    asUser(user, async (tx) => {
      const r = await tx.query<LockedWorkspace>(
        'select id, name, slug from internal.my_mfa_locked_workspaces() order by name, slug limit $1',
        [LOCKED_SHOWN + 1],
      );
      return firstOf(r.rows, LOCKED_SHOWN);
    }),
);

/** The workspace at `slug` if it is one of the user's that waits for two-step verification. */
export async function lockedWorkspace(user: SignedIn, slug: string): Promise<LockedWorkspace | null> {
  return asUser(user, async (tx) => {
    const r = await tx.query<LockedWorkspace>(
      'select id, name, slug from internal.my_mfa_locked_workspaces() where slug = $1',
      [slug],
    );
    return r.rows[0] ?? null;
  });
}

/** A workspace in the switcher. */
export interface SwitcherEntry {
  slug: string;
  name: string;
  role: Role;
  /** the logo's name in the workspace-logos bucket, or null */
  logoPath: string | null;
}

/** How many workspaces the header's switcher lists; the rest are a search away on /workspaces. */
export const SWITCHER_SIZE = 8;

/** The switcher's workspaces: the first SWITCHER_SIZE by name, and whether there are more. Once per request. */
export const switcherWorkspaces = cache(
  async (user: SignedIn): Promise<{ items: SwitcherEntry[]; more: boolean }> =>
    asUser(user, async (tx) => {
      const r = await tx.query<SwitcherEntry>(
        `select w.slug, w.name, m.role, w.logo_path as "logoPath"
         from public.workspaces w
         join public.workspace_members m on m.workspace_id = w.id and m.user_id = auth.uid()
         order by lower(w.name), w.slug limit $1`,
        [SWITCHER_SIZE + 1],
      );
      return firstOf(r.rows, SWITCHER_SIZE);
    }),
);

/** Workspaces on one page of /workspaces (a multiple of the grid's 1, 2 and 3 columns). */
export const WORKSPACES_PAGE_SIZE = 24;

/**
 * One page of the user's own workspaces whose name or address contains the search, by name, with
 * the columns `select` names (a fixed list from this module, never input). A page past the end
 * shows the last one.
 */
async function pageOfMine<Row extends object>(
  user: SignedIn,
  request: PageRequest,
  size: number,
  select: string,
): Promise<Paged<Row>> {
  return asUser(user, async (tx) => {
    const pattern = request.q ? containsPattern(request.q) : null;
    const mine = `from public.workspaces w
       join public.workspace_members m on m.workspace_id = w.id and m.user_id = auth.uid()
       where $1::text is null or w.name ilike $1 or w.slug ilike $1`;
    const counted = await tx.query<{ n: number }>(`select count(*)::int as n ${mine}`, [pattern]);
    const total = counted.rows[0]?.n ?? 0;
    const at = { ...request, page: Math.min(request.page, lastPage(total, size)) };
    const { limit, offset } = pageWindow(at, size);
    const r = await tx.query<Row>(
      `select ${select} ${mine} order by lower(w.name), w.slug limit $2 offset $3`,
      [pattern, limit, offset],
    );
    return paged(r.rows, at, size, total);
  });
}

/**
 * One page of the user's workspaces with their role and sizes, by name; `q` matches the name or
 * the address. A page past the end shows the last one.
 */
export async function myWorkspacesPage(
  user: SignedIn,
  request: PageRequest,
): Promise<Paged<WorkspaceSummary>> {
  return pageOfMine<WorkspaceSummary>(
    user,
    request,
    WORKSPACES_PAGE_SIZE,
    `w.id, w.name, w.slug, m.role,
     (select count(*) from public.workspace_members x where x.workspace_id = w.id)::int as members,
     (select count(*) from public.projects p where p.workspace_id = w.id)::int as projects`,
  );
}

/** Workspaces on one page of the notification settings. */
export const MUTE_PAGE_SIZE = 25;

/** One page of the user's workspaces, names only, by name (for choosing which to leave out of the digest). */
export async function workspaceNamesPage(
  user: SignedIn,
  request: PageRequest,
): Promise<Paged<{ id: string; name: string }>> {
  return pageOfMine<{ id: string; name: string }>(user, request, MUTE_PAGE_SIZE, 'w.id, w.name');
}

/** The workspace with this slug if the user belongs to it; null otherwise (never revealing which). */
export const workspaceBySlug = cache(async (user: SignedIn, slug: string): Promise<WorkspaceAccess | null> =>
  asUser(user, async (tx) => {
    const r = await tx.query<WorkspaceAccess>(
      `select w.id, w.name, w.slug, m.role, coalesce(s.past_due_since is not null, false) as "pastDue",
              w.require_mfa as "requireMfa", w.logo_path as "logoPath"
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
