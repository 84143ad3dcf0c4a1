// In charge of reading a workspace's members and invitations for the members page, and of which
// controls the viewer may be offered for each member (the database decides in the end; the page
// only offers what it would allow).
import { asUser } from '@/app/lib/db';
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

export async function listMembers(user: SignedIn, workspaceId: string): Promise<MemberRow[]> {
  return asUser(user, async (tx) => {
    const r = await tx.query<MemberRow>(
      `select m.user_id as "userId", p.email, p.display_name as "displayName", p.avatar_url as "avatarUrl",
              m.role, m.created_at as "joinedAt"
       from public.workspace_members m join public.profiles p on p.id = m.user_id
       where m.workspace_id = $1
       order by m.role desc, lower(coalesce(p.display_name, p.email))`,
      [workspaceId],
    );
    return r.rows;
  });
}

/** Open invitations (admins and owners see them; row-level security shows others none). */
export async function listInvitations(user: SignedIn, workspaceId: string): Promise<InvitationRow[]> {
  return asUser(user, async (tx) => {
    const r = await tx.query<InvitationRow>(
      `select i.id, i.email, i.role, i.created_at as "createdAt", i.expires_at as "expiresAt",
              coalesce(p.display_name, p.email) as "invitedBy",
              case when i.expires_at <= now() then 'expired' else 'pending' end as status
       from public.invitations i left join public.profiles p on p.id = i.invited_by
       where i.workspace_id = $1 and i.accepted_at is null and i.revoked_at is null and i.declined_at is null
       order by i.created_at desc`,
      [workspaceId],
    );
    return r.rows;
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
