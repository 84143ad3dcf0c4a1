// A project's page: its name, who created it and when, and its files (list, download; members add
// and delete them). Readers of the workspace see it; for anyone else it does not exist.
import { ChevronLeft } from 'lucide-react';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { PageHeader } from '@/app/components/page-header';
import { RelativeTime } from '@/app/components/relative-time';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { requireWorkspace } from '@/app/lib/db';
import { APP_BUCKETS, uploadLimits } from '@/app/lib/files';
import { listProjectFiles, projectById } from '@/app/lib/queries/project-files';
import { workspaceTitle } from '@/app/lib/titles';
import { ProjectFiles } from '@/app/w/[slug]/projects/[id]/project-files';
import { count } from '@/server/text/counts';

export const dynamic = 'force-dynamic';

type Params = { params: Promise<{ slug: string; id: string }> };

export const generateMetadata = ({ params }: Params) => workspaceTitle(params, 'Project');

export default async function ProjectPage({ params }: Params) {
  const { id } = await params;
  const { user, workspace } = await requireWorkspace(params, `/projects/${encodeURIComponent(id)}`);
  const project = await projectById(user, workspace.id, id);
  if (!project) notFound();
  const canWrite = workspace.role !== 'viewer';
  const [{ files, more }, limits] = await Promise.all([
    listProjectFiles(user, workspace.id, project.id),
    // The limits an upload here meets (any new name in this project's folder meets the same).
    uploadLimits(APP_BUCKETS.projectFiles, `${workspace.id}/${project.id}/new/file`),
  ]);
  return (
    <>
      <Link
        href={`/w/${workspace.slug}`}
        className="mb-3 inline-flex min-h-11 items-center gap-1 text-sm text-muted-foreground hover:text-foreground sm:min-h-0"
      >
        <ChevronLeft className="size-4" aria-hidden="true" />
        {workspace.name}
      </Link>
      <PageHeader
        title={project.name}
        description={
          <>
            Created <RelativeTime date={project.createdAt} />
            {project.createdBy ? ` by ${project.createdBy}` : ''}
          </>
        }
      />
      {project.description ? <p className="mb-6 max-w-prose text-sm">{project.description}</p> : null}
      <Card aria-labelledby="files">
        <CardHeader>
          <CardTitle id="files">Files</CardTitle>
          <CardDescription>
            {files.length === 0
              ? 'Nothing attached yet.'
              : `${more ? 'The newest ' : ''}${count(files.length, 'file')}, newest first.`}
          </CardDescription>
        </CardHeader>
        <CardContent>
          <ProjectFiles
            slug={workspace.slug}
            workspaceId={workspace.id}
            projectId={project.id}
            canWrite={canWrite}
            more={more}
            limits={limits}
            files={files.map((f) => ({
              name: f.name,
              fileName: f.fileName,
              size: f.size,
              uploadedBy: f.uploadedBy,
              uploadedAt: new Date(f.uploadedAt).toISOString(),
              downloadUrl: f.downloadUrl,
            }))}
          />
        </CardContent>
      </Card>
    </>
  );
}
