// A workspace's overview: its logo, its projects (a page at a time, searchable by name, each
// opening its page of files, with an actions menu per project, and an empty state that invites
// the first one) and its activity, told in sentences with the actors' pictures, a page at a time.
// Only members see it; for anyone else the workspace does not exist.
import { Activity, FolderKanban } from 'lucide-react';
import Link from 'next/link';
import { PageHeader } from '@/app/components/page-header';
import { hrefWith, Pager } from '@/app/components/pager';
import { SearchForm } from '@/app/components/search-form';
import { RelativeTime } from '@/app/components/relative-time';
import { Avatar } from '@/app/components/ui/avatar';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { WorkspaceMark } from '@/app/components/workspace-mark';
import { requireWorkspace } from '@/app/lib/db';
import { APP_BUCKETS, pictureUrl } from '@/app/lib/files';
import { pageRequest } from '@/app/lib/paging';
import { recentActivity } from '@/app/lib/queries/activity';
import { listProjects } from '@/app/lib/queries/projects';
import { workspaceTitle } from '@/app/lib/titles';
import { CreateProjectForm } from '@/app/w/[slug]/_components/create-project-form';
import { ProjectActions } from '@/app/w/[slug]/_components/project-actions';
import { count } from '@/server/text/counts';

export const dynamic = 'force-dynamic';

type Params = { params: Promise<{ slug: string }> };
type Props = Params & { searchParams: Promise<Record<string, string | string[] | undefined>> };

export const generateMetadata = ({ params }: Params) => workspaceTitle(params);

export default async function WorkspacePage({ params, searchParams }: Props) {
  const { user, workspace } = await requireWorkspace(params);
  const query = await searchParams;
  const projectsAsked = pageRequest(query);
  const [projectPage, activityPage, logoUrl] = await Promise.all([
    listProjects(user, workspace.id, projectsAsked),
    recentActivity(user, workspace.id, pageRequest(query, { page: 'activity' })),
    pictureUrl(user, APP_BUCKETS.logos, workspace.logoPath),
  ]);
  const projects = projectPage.items;
  const activity = activityPage.items;
  const total = projectPage.total ?? projects.length;
  const path = `/w/${workspace.slug}`;
  const canEdit = workspace.role !== 'viewer';
  return (
    <>
      <PageHeader
        title={
          <span className="flex min-w-0 items-center gap-3">
            <WorkspaceMark name={workspace.name} logoUrl={logoUrl} className="size-9 text-base" />
            <span className="truncate">{workspace.name}</span>
          </span>
        }
        description={
          <>
            /{workspace.slug} · you are <Badge variant="outline">{workspace.role}</Badge>
          </>
        }
      />
      <div className="grid grid-cols-1 items-start gap-6 lg:grid-cols-[minmax(0,2fr)_minmax(0,1fr)]">
        <Card aria-labelledby="projects">
          <CardHeader>
            <CardTitle id="projects">Projects</CardTitle>
            <CardDescription>
              {projectsAsked.q
                ? `${count(total, 'project')} matching “${projectsAsked.q}”, newest first.`
                : total === 0
                  ? 'Nothing here yet.'
                  : `${count(total, 'project')}, newest first.`}
              {canEdit ? ' Two projects may share a name.' : ''}
            </CardDescription>
          </CardHeader>
          <CardContent className="grid grid-cols-1 gap-4">
            {canEdit ? <CreateProjectForm slug={workspace.slug} workspaceId={workspace.id} /> : null}
            {projectsAsked.q || projectPage.page > 1 || projectPage.hasNext ? (
              <SearchForm
                id="project-search"
                path={path}
                name="q"
                value={projectsAsked.q}
                label="Search projects by name"
                placeholder="Search projects"
                keep={activityPage.page > 1 ? { activity: String(activityPage.page) } : {}}
                clearHref={hrefWith(path, query, { q: null, page: null })}
              />
            ) : null}
            {projects.length === 0 && projectsAsked.q ? (
              <p role="status" className="rounded-md border border-dashed px-6 py-6 text-center text-sm">
                No project matches “{projectsAsked.q}”.
              </p>
            ) : projects.length === 0 ? (
              <div className="rounded-md border border-dashed px-6 py-10 text-center">
                <FolderKanban className="mx-auto size-8 text-muted-foreground" aria-hidden="true" />
                <p className="mt-3 text-sm font-medium">No projects yet</p>
                <p className="mt-1 text-sm text-muted-foreground">
                  {canEdit
                    ? 'Name your first project above; everyone in the workspace will see it.'
                    : 'When members add projects, they appear here.'}
                </p>
              </div>
            ) : null}
            <ul aria-label="Projects" className="divide-y rounded-md border empty:hidden">
              {projects.map((p) => (
                <li key={p.id} className="flex items-center gap-3 px-3 py-2 sm:px-4">
                  <span
                    aria-hidden="true"
                    className="inline-flex size-8 shrink-0 items-center justify-center rounded-md bg-primary/10 text-primary"
                  >
                    <FolderKanban className="size-4" />
                  </span>
                  <span className="min-w-0 flex-1">
                    <Link
                      href={`${path}/projects/${p.id}`}
                      className="block truncate text-sm font-medium underline-offset-4 hover:underline"
                      data-project-name=""
                    >
                      {p.name}
                    </Link>
                    <span className="block truncate text-xs text-muted-foreground">
                      Created <RelativeTime date={p.createdAt} />
                      {p.createdBy ? ` by ${p.createdBy}` : ''}
                    </span>
                  </span>
                  {canEdit ? (
                    <ProjectActions slug={workspace.slug} project={{ id: p.id, name: p.name }} />
                  ) : null}
                </li>
              ))}
            </ul>
            <Pager label="Projects" result={projectPage} href={(n) => hrefWith(path, query, { page: n })} />
          </CardContent>
        </Card>
        <Card aria-labelledby="activity">
          <CardHeader>
            <CardTitle id="activity">Activity</CardTitle>
            <CardDescription>What happened in this workspace lately.</CardDescription>
          </CardHeader>
          <CardContent>
            {activity.length === 0 ? (
              <p className="flex items-center gap-2 text-sm text-muted-foreground">
                <Activity className="size-4" aria-hidden="true" />{' '}
                {activityPage.page > 1 ? 'Nothing older.' : 'No activity yet.'}
              </p>
            ) : (
              <ol aria-label="Activity" className="grid grid-cols-1 gap-4">
                {activity.map((e) => (
                  <li key={e.id} className="flex gap-3 text-sm">
                    <Avatar
                      name={e.actorName}
                      seed={e.actorId ?? e.actorName}
                      src={e.actorPicture}
                      className="size-7 text-[0.625rem]"
                    />
                    <p className="min-w-0 break-words">
                      <span className="font-medium">{e.actor}</span> {e.sentence}
                      <span className="block text-xs text-muted-foreground">
                        <RelativeTime date={e.createdAt} />
                      </span>
                    </p>
                  </li>
                ))}
              </ol>
            )}
            <Pager
              label="Activity"
              result={activityPage}
              href={(n) => hrefWith(path, query, { activity: n })}
              className="mt-4"
            />
          </CardContent>
        </Card>
      </div>
    </>
  );
}
