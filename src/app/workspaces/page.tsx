// The signed-in user's workspaces, read under their own row-level security, a page at a time and
// searchable by name or address, and a form to create one. A new account starts here with an
// empty state that invites the first workspace.
import { ArrowRight, FolderKanban, ShieldAlert, Users } from 'lucide-react';
import Link from 'next/link';
import { PageHeader } from '@/app/components/page-header';
import { hrefWith, Pager } from '@/app/components/pager';
import { SearchForm } from '@/app/components/search-form';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { CreateWorkspaceForm } from '@/app/workspaces/create-workspace-form';
import { JoinableWorkspaces } from '@/app/workspaces/joinable-workspaces';
import { pageRequest } from '@/app/lib/paging';
import { myLockedWorkspaces, myWorkspacesPage } from '@/app/lib/queries/workspaces';
import { requireUser } from '@/app/lib/session';
import { count } from '@/server/text/counts';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Workspaces' };

export default async function WorkspacesPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const user = await requireUser('/workspaces');
  const params = await searchParams;
  const request = pageRequest(params);
  const [result, locked] = await Promise.all([myWorkspacesPage(user, request), myLockedWorkspaces(user)]);
  const workspaces = result.items;
  const searching = request.q !== '';
  const showSearch = searching || result.total === null || result.total > 6;
  return (
    <>
      <PageHeader title="Your workspaces" description={`Signed in as ${user.email}`} />
      {locked.items.length > 0 ? (
        <section
          aria-labelledby="locked-title"
          className="mb-8 rounded-lg border border-dashed bg-card px-5 py-4 text-sm"
        >
          <h2 id="locked-title" className="flex items-center gap-2 font-semibold">
            <ShieldAlert className="size-4 text-primary" aria-hidden="true" />
            Waiting for two-step verification
          </h2>
          <p className="mt-1 text-muted-foreground">
            These workspaces require it;{' '}
            <Link className="underline" href="/settings/security">
              set it up
            </Link>{' '}
            to open them:{' '}
            {locked.items.map((w, i) => (
              <span key={w.id}>
                {i > 0 ? ', ' : ''}
                <Link className="font-medium text-foreground underline" href={`/two-step-required/${w.slug}`}>
                  {w.name}
                </Link>
              </span>
            ))}
            {locked.more ? ' and more' : ''}
          </p>
        </section>
      ) : null}
      <JoinableWorkspaces user={user} />
      {showSearch ? (
        <div id="find-workspace" className="mb-4 scroll-mt-24">
          <SearchForm
            id="workspace-search"
            path="/workspaces"
            name="q"
            value={request.q}
            label="Search your workspaces by name or address"
            placeholder="Search workspaces"
            clearHref="/workspaces"
          />
        </div>
      ) : null}
      {workspaces.length === 0 && searching ? (
        <p
          role="status"
          className="mb-8 rounded-lg border border-dashed bg-card px-6 py-8 text-center text-sm"
        >
          No workspace of yours matches “{request.q}”.
        </p>
      ) : workspaces.length === 0 ? (
        <div className="mb-8 rounded-lg border border-dashed bg-card px-6 py-10 text-center">
          <FolderKanban className="mx-auto size-8 text-muted-foreground" aria-hidden="true" />
          <h2 className="mt-3 text-base font-semibold">No workspaces yet</h2>
          <p className="mx-auto mt-1 max-w-md text-sm text-muted-foreground">
            Create a workspace for your team below, or open the invitation link someone sent you.
          </p>
        </div>
      ) : (
        <ul aria-label="Workspaces" className="mb-8 grid gap-4 sm:grid-cols-2 lg:grid-cols-3">
          {workspaces.map((w) => (
            <li key={w.id}>
              <Link
                href={`/w/${w.slug}`}
                className="group flex h-full flex-col rounded-lg border bg-card p-5 shadow-xs transition-colors hover:border-input"
              >
                <span className="flex items-start justify-between gap-3">
                  <span className="flex min-w-0 items-center gap-3">
                    <span
                      aria-hidden="true"
                      className="inline-flex size-9 shrink-0 items-center justify-center rounded-md bg-foreground text-sm font-semibold text-background"
                    >
                      {[...w.name.trim()][0]?.toUpperCase()}
                    </span>
                    <span className="min-w-0">
                      <strong className="block truncate font-semibold">{w.name}</strong>
                      <span className="block truncate text-sm text-muted-foreground">/{w.slug}</span>
                    </span>
                  </span>
                  <Badge variant={w.role === 'owner' ? 'primary' : 'default'}>{w.role}</Badge>
                </span>
                <span className="mt-4 flex items-center gap-4 text-sm text-muted-foreground">
                  <span className="inline-flex items-center gap-1.5">
                    <Users className="size-4" aria-hidden="true" />
                    {count(w.members, 'member')}
                  </span>
                  <span className="inline-flex items-center gap-1.5">
                    <FolderKanban className="size-4" aria-hidden="true" />
                    {count(w.projects, 'project')}
                  </span>
                  <ArrowRight
                    className="ml-auto size-4 opacity-0 transition-opacity group-hover:opacity-100"
                    aria-hidden="true"
                  />
                </span>
              </Link>
            </li>
          ))}
        </ul>
      )}
      <Pager
        label="Workspaces"
        result={result}
        href={(n) => hrefWith('/workspaces', params, { page: n, new: null })}
        className="-mt-4 mb-8"
      />
      <Card aria-labelledby="new-workspace-title" id="new-workspace" className="scroll-mt-24">
        <CardHeader>
          <CardTitle id="new-workspace-title">New workspace</CardTitle>
          <CardDescription>You will be its owner and can invite your team right away.</CardDescription>
        </CardHeader>
        <CardContent>
          <CreateWorkspaceForm autoFocus={params.new === '1'} />
        </CardContent>
      </Card>
    </>
  );
}
