// Members and invitations of a workspace. Everyone sees the members; admins and owners also get
// the role, remove and invitation controls (the database decides whether each change is allowed).
import {
  changeRoleAction,
  inviteAction,
  leaveWorkspaceAction,
  removeMemberAction,
  resendInvitationAction,
  revokeInvitationAction,
} from '@/app/actions/members';
import { asUser, requireWorkspace } from '@/app/lib/db';
import { Flash } from '@/app/components/flash';
import { WorkspaceNav } from '@/app/w/[slug]/nav';

export const dynamic = 'force-dynamic';

const ROLES = ['viewer', 'member', 'admin', 'owner'] as const;

export default async function MembersPage({ params }: { params: Promise<{ slug: string }> }) {
  const { user, workspace } = await requireWorkspace(params, '/members');
  const manage = workspace.role === 'admin' || workspace.role === 'owner';
  const { members, invitations } = await asUser(user, async (tx) => ({
    members: (
      await tx.query<{ user_id: string; role: string; email: string; display_name: string | null }>(
        `select m.user_id, m.role, p.email, p.display_name from public.workspace_members m
         join public.profiles p on p.id = m.user_id where m.workspace_id = $1 order by p.email`,
        [workspace.id],
      )
    ).rows,
    invitations: manage
      ? (
          await tx.query<{ id: string; email: string; role: string; expires_at: Date }>(
            `select id, email, role, expires_at from public.invitations
             where workspace_id = $1 and accepted_at is null and revoked_at is null and declined_at is null
             order by created_at desc`,
            [workspace.id],
          )
        ).rows
      : [],
  }));
  const hidden = (
    <>
      <input type="hidden" name="slug" value={workspace.slug} />
      <input type="hidden" name="workspace_id" value={workspace.id} />
    </>
  );
  return (
    <>
      <h1>{workspace.name}: members</h1>
      <WorkspaceNav
        slug={workspace.slug}
        current="/members"
        role={workspace.role}
        pastDue={workspace.pastDue}
      />
      <Flash />
      <section className="card" aria-labelledby="members">
        <h2 id="members">Members</h2>
        <table aria-label="Members">
          <tbody>
            {members.map((m) => (
              <tr key={m.user_id}>
                <td>
                  {m.display_name ?? m.email} <span className="muted">{m.display_name ? m.email : ''}</span>
                </td>
                <td>
                  {manage && m.user_id !== user.userId ? (
                    <form action={changeRoleAction} className="inline">
                      {hidden}
                      <input type="hidden" name="user_id" value={m.user_id} />
                      <select name="role" defaultValue={m.role} aria-label={`Role of ${m.email}`}>
                        {ROLES.map((r) => (
                          <option key={r} value={r}>
                            {r}
                          </option>
                        ))}
                      </select>{' '}
                      <button type="submit" className="link-button">
                        Change role
                      </button>
                    </form>
                  ) : (
                    m.role
                  )}
                </td>
                <td>
                  {manage && m.user_id !== user.userId ? (
                    <form action={removeMemberAction}>
                      {hidden}
                      <input type="hidden" name="user_id" value={m.user_id} />
                      <button type="submit" className="link-button">
                        Remove {m.email}
                      </button>
                    </form>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <form action={leaveWorkspaceAction}>
          {hidden}
          <button type="submit" className="link-button">
            Leave this workspace
          </button>
        </form>
      </section>
      {manage ? (
        <section className="card" aria-labelledby="invite">
          <h2 id="invite">Invite someone</h2>
          <form action={inviteAction} className="stack">
            {hidden}
            <label>
              E-mail
              <input name="email" type="email" required />
            </label>
            <label>
              Role
              <select name="role" defaultValue="member">
                {ROLES.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit" className="button">
              Send invitation
            </button>
          </form>
          <h3>Pending invitations</h3>
          {invitations.length === 0 ? <p className="muted">None.</p> : null}
          <ul className="list" aria-label="Pending invitations">
            {invitations.map((i) => (
              <li key={i.id}>
                {i.email} as {i.role}, until {new Date(i.expires_at).toISOString().slice(0, 10)}{' '}
                <form action={resendInvitationAction} className="inline">
                  <input type="hidden" name="slug" value={workspace.slug} />
                  <input type="hidden" name="invitation_id" value={i.id} />
                  <button type="submit" className="link-button">
                    Resend
                  </button>
                </form>{' '}
                <form action={revokeInvitationAction} className="inline">
                  <input type="hidden" name="slug" value={workspace.slug} />
                  <input type="hidden" name="invitation_id" value={i.id} />
                  <button type="submit" className="link-button">
                    Revoke
                  </button>
                </form>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </>
  );
}
