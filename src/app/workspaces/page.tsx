// The signed-in user's workspaces, read under their own row-level security, and a form to create
// one.
import Link from 'next/link';
import { createWorkspaceAction } from '@/app/actions/workspaces';
import { Flash } from '@/app/components/flash';
import { requireUser } from '@/app/lib/session';
import { withRls } from '@/server/db/transactions';
import { getRuntime } from '@/server/runtime';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Workspaces' };

interface Row {
  id: string;
  name: string;
  slug: string;
  role: string;
}

export default async function WorkspacesPage() {
  const user = await requireUser('/workspaces');
  const workspaces = await withRls(getRuntime().pool, user.claims, async (tx) => {
    const r = await tx.query<Row>(
      `select w.id, w.name, w.slug, m.role from public.workspaces w
       join public.workspace_members m on m.workspace_id = w.id and m.user_id = auth.uid()
       order by w.name`,
    );
    return r.rows;
  });
  return (
    <>
      <h1>Your workspaces</h1>
      <p className="muted">Signed in as {user.email}</p>
      <Flash />
      {workspaces.length === 0 ? (
        <p>You are not in any workspace yet. Create one, or accept an invitation.</p>
      ) : (
        <ul className="list" aria-label="Workspaces">
          {workspaces.map((w) => (
            <li key={w.id} className="card">
              <Link href={`/w/${w.slug}`}>
                <strong>{w.name}</strong>
              </Link>{' '}
              <span className="muted">
                /{w.slug} · {w.role}
              </span>
            </li>
          ))}
        </ul>
      )}
      <section className="card" aria-labelledby="new-workspace">
        <h2 id="new-workspace">New workspace</h2>
        <form action={createWorkspaceAction} className="stack">
          <label>
            Name
            <input name="name" required maxLength={100} />
          </label>
          <button type="submit" className="button">
            Create workspace
          </button>
        </form>
      </section>
    </>
  );
}
