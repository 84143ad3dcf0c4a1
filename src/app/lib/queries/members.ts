// In charge of reading a workspace's members and invitations for the members page, a page at a
// time and searchable (a workspace may have thousands), and of which controls the viewer may be
// offered for each member (the database decides in the end; the page only offers what it would
// allow).
import { asUser } from '@/app/lib/db';
import { APP_BUCKETS, readableUrls } from '@/app/lib/files';
import { containsPattern, lastPage, paged, pageWindow, type PageRequest, type Paged } from '@/app/lib/paging';
import type { SignedIn } from '@/app/lib/session';
import type { Role } from '@/app/lib/queries/workspaces';

export const ROLES: readonly Role[] = ['viewer', 'member', 'admin', 'owner'];
const rank = (role: Role) => ROLES.indexOf(role);

export interface MemberRow {
  userId: string;
  email: string;
  displayName: string | null;
  avatarUrl: string | null;
  role: Role;
  joinedAt: Date;
}

export interface InvitationRow {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
  invitedBy: string | null;
  status: 'pending' | 'expired';
}

export const MEMBERS_PAGE_SIZE = 20;
export const INVITATIONS_PAGE_SIZE = 20;

export interface MemberList extends Paged<MemberRow> {
  /** owners in the whole workspace (a workspace always keeps one) */
  owners: number;
  /** members in the whole workspace, whatever the search */
  everyone: number;
}

/** One page of the members, owners first, by name; `q` matches a name or an e-mail address. */
export async function listMembers(
  user: SignedIn,
  workspaceId: string,
  request: PageRequest,
): Promise<MemberList> {
  const size = MEMBERS_PAGE_SIZE;
  const page = await asUser(user, async (tx) => {
    const pattern = request.q ? containsPattern(request.q) : null;
    const counted = await tx.query<{ everyone: number; owners: number; matching: number }>(
      `select count(*)::int as everyone, (count(*) filter (where m.role = 'owner'))::int as owners,
              (count(*) filter (where $2::text is null or p.email ilike $2 or p.display_name ilike $2))::int as matching
       from public.workspace_members m join public.profiles p on p.id = m.user_id
       where m.workspace_id = $1`,
      [workspaceId, pattern],
    );
    const { everyone = 0, owners = 0, matching = 0 } = counted.rows[0] ?? {};
    const at = { ...request, page: Math.min(request.page, lastPage(matching, size)) };
    const { limit, offset } = pageWindow(at, size);
    const r = await tx.query<MemberRow & { avatarPath: string | null }>(
      `select m.user_id as "userId", p.email, p.display_name as "displayName", p.avatar_url as "avatarUrl",
              p.avatar_path as "avatarPath", m.role, m.created_at as "joinedAt"
       from public.workspace_members m join public.profiles p on p.id = m.user_id
       where m.workspace_id = $1 and ($2::text is null or p.email ilike $2 or p.display_name ilike $2)
       order by m.role desc, lower(coalesce(p.display_name, p.email)), m.user_id
       limit $3 offset $4`,
      [workspaceId, pattern, limit, offset],
    );
    return { rows: r.rows, at, matching, owners, everyone };
  });
  // Pictures the viewer may see, signed for the browser; a picture set before uploads stays.
  const pictures = await readableUrls(
    user,
    APP_BUCKETS.avatars,
    page.rows.map((m) => m.avatarPath),
  );
  const rows = page.rows.map(({ avatarPath, ...m }) => ({
    ...m,
    avatarUrl: avatarPath ? (pictures.get(avatarPath) ?? null) : m.avatarUrl,
  }));
  return { ...paged(rows, page.at, size, page.matching), owners: page.owners, everyone: page.everyone };
}

/**
 * One page of the open invitations, newest first; `q` matches the e-mail address (admins and
 * owners see them; row-level security shows others none).
 */
export async function listInvitations(
  user: SignedIn,
  workspaceId: string,
  request: PageRequest,
): Promise<Paged<InvitationRow>> {
  const size = INVITATIONS_PAGE_SIZE;
  return asUser(user, async (tx) => {
    const pattern = request.q ? containsPattern(request.q) : null;
    const open = `i.workspace_id = $1 and i.accepted_at is null and i.revoked_at is null and i.declined_at is null
                  and ($2::text is null or i.email ilike $2)`;
    const counted = await tx.query<{ n: number }>(
      `select count(*)::int as n from public.invitations i where ${open}`,
      [workspaceId, pattern],
    );
    const total = counted.rows[0]?.n ?? 0;
    const at = { ...request, page: Math.min(request.page, lastPage(total, size)) };
    const { limit, offset } = pageWindow(at, size);
    const r = await tx.query<InvitationRow>(
      `select i.id, i.email, i.role, i.created_at as "createdAt", i.expires_at as "expiresAt",
              coalesce(p.display_name, p.email) as "invitedBy",
              case when i.expires_at <= now() then 'expired' else 'pending' end as status
       from public.invitations i left join public.profiles p on p.id = i.invited_by
       where ${open}
       order by i.created_at desc, i.id
       limit $3 offset $4`,
      [workspaceId, pattern, limit, offset],
    );
    return paged(r.rows, at, size, total);
  });
}

/** What the viewer may do to one member, by the rules the database enforces. */
export function allowedControls(
  viewer: { userId: string; role: Role },
  member: { userId: string; role: Role },
  owners: number,
): { roles: Role[]; remove: boolean } {
  const none = { roles: [] as Role[], remove: false };
  if (member.userId === viewer.userId) return none;
  if (viewer.role !== 'admin' && viewer.role !== 'owner') return none;
  // Only owners touch owners; a workspace always keeps one.
  if (member.role === 'owner' && (viewer.role !== 'owner' || owners < 2)) return none;
  return { roles: ROLES.filter((r) => rank(r) <= rank(viewer.role)), remove: true };
}

/** Roles the viewer may invite with: never above their own. */
export function invitableRoles(viewer: Role): Role[] {
  return ROLES.filter((r) => rank(r) <= rank(viewer));
}
