// In charge of reading domain auto-join for pages (decision 0095): a workspace's claimed domains
// and pending requests (owners and admins), and the workspaces the signed-in person's confirmed
// address lets them join. Each goes through the tenancy functions, which decide who may see what.
import { asUser } from '@/app/lib/db';
import type { SignedIn } from '@/app/lib/session';

export interface WorkspaceDomain {
  id: string;
  domain: string;
  verified: boolean;
  verified_by: 'owner_email' | 'dns' | null;
  verified_at: string | null;
  last_checked_at: string | null;
  policy: 'off' | 'auto_join' | 'request';
  join_role: 'viewer' | 'member';
  dns_record_name: string;
  dns_record_value: string;
  held_elsewhere: boolean;
}

export interface JoinRequest {
  id: string;
  user_id: string;
  email: string;
  display_name: string | null;
  domain: string;
  role: string | null;
  created_at: string;
}

export interface JoinableWorkspace {
  workspace_id: string;
  name: string;
  slug: string;
  domain: string;
  policy: 'auto_join' | 'request';
  join_role: string;
  members: number;
  request: {
    id: string;
    status: 'pending' | 'approved' | 'denied' | 'cancelled';
    decided_at: string | null;
  } | null;
}

export function workspaceDomains(user: SignedIn, workspaceId: string): Promise<WorkspaceDomain[]> {
  return asUser(user, async (tx) => {
    const r = await tx.query<{ d: WorkspaceDomain }>('select public.list_workspace_domains($1) as d', [
      workspaceId,
    ]);
    return r.rows.map((row) => row.d);
  });
}

export function pendingJoinRequests(user: SignedIn, workspaceId: string): Promise<JoinRequest[]> {
  return asUser(user, async (tx) => {
    const r = await tx.query<{ r: JoinRequest }>('select public.list_join_requests($1) as r', [workspaceId]);
    return r.rows.map((row) => row.r);
  });
}

export function joinableWorkspaces(user: SignedIn): Promise<JoinableWorkspace[]> {
  return asUser(user, async (tx) => {
    const r = await tx.query<{ w: JoinableWorkspace }>('select public.joinable_workspaces() as w');
    return r.rows.map((row) => row.w);
  });
}
