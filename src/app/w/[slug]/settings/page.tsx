// Workspace settings: name and slug (admins and owners), and deletion (owners, with confirmation).
import { deleteWorkspaceAction, renameWorkspaceAction } from '@/app/actions/settings';
import { requireWorkspace } from '@/app/lib/db';
import { Flash } from '@/app/components/flash';
import { WorkspaceNav } from '@/app/w/[slug]/nav';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Workspace settings' };

export default async function SettingsPage({ params }: { params: Promise<{ slug: string }> }) {
  const { workspace } = await requireWorkspace(params, '/settings');
  const canEdit = workspace.role === 'admin' || workspace.role === 'owner';
  return (
    <>
      <h1>{workspace.name}: settings</h1>
      <WorkspaceNav
        slug={workspace.slug}
        current="/settings"
        role={workspace.role}
        pastDue={workspace.pastDue}
      />
      <Flash />
      <section className="card" aria-labelledby="general">
        <h2 id="general">Name and address</h2>
        {canEdit ? (
          <form action={renameWorkspaceAction} className="stack">
            <input type="hidden" name="slug" value={workspace.slug} />
            <input type="hidden" name="workspace_id" value={workspace.id} />
            <label>
              Name
              <input name="name" defaultValue={workspace.name} required maxLength={100} />
            </label>
            <label>
              Slug
              <input
                name="new_slug"
                defaultValue={workspace.slug}
                required
                maxLength={48}
                pattern="[a-z0-9-]+"
              />
            </label>
            <button type="submit" className="button">
              Save
            </button>
          </form>
        ) : (
          <p className="muted">Only admins and owners change these.</p>
        )}
      </section>
      {workspace.role === 'owner' ? (
        <section className="card" aria-labelledby="danger">
          <h2 id="danger">Delete this workspace</h2>
          <p>
            Everything in it is deleted: members, invitations, projects and activity. This cannot be undone.
          </p>
          <form action={deleteWorkspaceAction} className="stack">
            <input type="hidden" name="slug" value={workspace.slug} />
            <input type="hidden" name="workspace_id" value={workspace.id} />
            <label>
              Type <code>{workspace.slug}</code> to confirm
              <input name="confirm" required autoComplete="off" />
            </label>
            <button type="submit" className="button danger">
              Delete workspace
            </button>
          </form>
        </section>
      ) : null}
    </>
  );
}
