// In charge of what an invitation link shows before anyone acts on it: the workspace, who
// invited, the role, the address it was sent to, and whether it is still open. Holding the token
// is the permission (it was mailed to that address), so this runs as the service, for signed-out
// visitors too, through one read-only database function.
import { withService } from '@/server/db/transactions';
import { getRuntime } from '@/server/runtime';

export type InvitationState = 'pending' | 'accepted' | 'revoked' | 'declined' | 'expired' | 'superseded';

export interface InvitationPreview {
  state: InvitationState;
  workspaceName: string;
  inviterName: string | null;
  email: string;
  role: string;
  expiresAt: Date;
}

/** The invitation a token names, or null when there is none (or the token is malformed). */
export async function invitationPreview(token: string): Promise<InvitationPreview | null> {
  if (!/^[A-Za-z0-9]{16,128}$/.test(token)) return null;
  return withService(getRuntime().pool, async (tx) => {
    const r = await tx.query<InvitationPreview>(
      `select state, workspace_name as "workspaceName", inviter_name as "inviterName", email, role::text,
              expires_at as "expiresAt"
       from internal.invitation_preview($1)`,
      [token],
    );
    return r.rows[0] ?? null;
  });
}
