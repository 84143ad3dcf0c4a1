// A workspace's dashboard: its projects and its activity feed. Only members see it; for anyone
// else the workspace does not exist.
import { deleteProjectAction, updateProjectAction } from '@/app/actions/settings';
import { createProjectAction } from '@/app/actions/workspaces';
import { asUser, requireWorkspace } from '@/app/lib/db';
import { Flash } from '@/app/components/flash';
import { WorkspaceNav } from '@/app/w/[slug]/nav';

export const dynamic = 'force-dynamic';

export default async function WorkspacePage({ params }: { params: Promise<{ slug: string }> }) {
  const { user, workspace } = await requireWorkspace(params);
  const { projects, activity } = await asUser(user, async (tx) => ({
    projects: (
      await tx.query<{ id: string; name: string }>(
        'select id, name from public.projects where workspace_id = $1 order by created_at desc limit 50',
        [workspace.id],
      )
    ).rows,
    activity: (
      await tx.query<{
        id: string;
        action: string;
        subject: string | null;
        created_at: Date;
        actor: string | null;
      }>(
        `select e.id, e.action, e.subject, e.created_at, coalesce(p.display_name, p.email) as actor
         from public.activity_events e left join public.profiles p on p.id = e.actor_id
         where e.workspace_id = $1 order by e.created_at desc, e.id desc limit 20`,
        [workspace.id],
      )
    ).rows,
  }));
  const canEdit = workspace.role !== 'viewer';
  return (
    <>
      <h1>{workspace.name}</h1>
      <WorkspaceNav slug={workspace.slug} current="" role={workspace.role} pastDue={workspace.pastDue} />
      <Flash />
      <section className="card" aria-labelledby="projects">
        <h2 id="projects">Projects</h2>
        {projects.length === 0 ? <p className="muted">No projects yet.</p> : null}
        <ul className="list" aria-label="Projects">
          {projects.map((p) => (
            <li key={p.id}>
              {canEdit ? (
                <>
                  <form action={updateProjectAction} className="inline">
                    <input type="hidden" name="slug" value={workspace.slug} />
                    <input type="hidden" name="project_id" value={p.id} />
                    <input
                      name="name"
                      defaultValue={p.name}
                      aria-label={`Name of ${p.name}`}
                      maxLength={200}
                      required
                    />{' '}
                    <button type="submit" className="link-button">
                      Rename
                    </button>
                  </form>{' '}
                  <form action={deleteProjectAction} className="inline">
                    <input type="hidden" name="slug" value={workspace.slug} />
                    <input type="hidden" name="project_id" value={p.id} />
                    <button type="submit" className="link-button">
                      Delete {p.name}
                    </button>
                  </form>
                </>
              ) : (
                p.name
              )}
            </li>
          ))}
        </ul>
        {canEdit ? (
          <form action={createProjectAction} className="stack">
            <input type="hidden" name="slug" value={workspace.slug} />
            <input type="hidden" name="workspace_id" value={workspace.id} />
            <label>
              New project
              <input name="name" required maxLength={200} />
            </label>
            <button type="submit" className="button">
              Add project
            </button>
          </form>
        ) : null}
      </section>
      <section className="card" aria-labelledby="activity">
        <h2 id="activity">Activity</h2>
        <ul className="list" aria-label="Activity">
          {activity.map((e) => (
            <li key={e.id}>
              <span className="muted">
                {new Date(e.created_at).toISOString().slice(0, 16).replace('T', ' ')}
              </span>{' '}
              {e.actor ?? 'Someone'}: {e.action.replace('.', ' ')} {e.subject ?? ''}
            </li>
          ))}
        </ul>
      </section>
    </>
  );
}
