// The signed-in user's workspaces, read under their own row-level security, and a form to create
// one. A new account starts here with an empty state that invites the first workspace.
import { ArrowRight, FolderKanban, ShieldAlert, Users } from 'lucide-react';
import Link from 'next/link';
import { PageHeader } from '@/app/components/page-header';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { CreateWorkspaceForm } from '@/app/workspaces/create-workspace-form';
import { myLockedWorkspaces, myWorkspaces } from '@/app/lib/queries/workspaces';
import { requireUser } from '@/app/lib/session';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Workspaces' };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export default async function WorkspacesPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const user = await requireUser('/workspaces');
  const [workspaces, locked, { new: wantsNew }] = await Promise.all([
    myWorkspaces(user),
    myLockedWorkspaces(user),
    searchParams,
  ]);
  return (
    <>
      <PageHeader title="Your workspaces" description={`Signed in as ${user.email}`} />
      {locked.length > 0 ? (
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
            {locked.map((w, i) => (
              <span key={w.id}>
                {i > 0 ? ', ' : ''}
                <Link className="font-medium text-foreground underline" href={`/two-step-required/${w.slug}`}>
                  {w.name}
                </Link>
              </span>
            ))}
          </p>
        </section>
      ) : null}
      {workspaces.length === 0 ? (
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
                    {plural(w.members, 'member')}
                  </span>
                  <span className="inline-flex items-center gap-1.5">
                    <FolderKanban className="size-4" aria-hidden="true" />
                    {plural(w.projects, 'project')}
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
      <Card aria-labelledby="new-workspace-title" id="new-workspace" className="scroll-mt-24">
        <CardHeader>
          <CardTitle id="new-workspace-title">New workspace</CardTitle>
          <CardDescription>You will be its owner and can invite your team right away.</CardDescription>
        </CardHeader>
        <CardContent>
          <CreateWorkspaceForm autoFocus={wantsNew === '1'} />
        </CardContent>
      </Card>
    </>
  );
}
