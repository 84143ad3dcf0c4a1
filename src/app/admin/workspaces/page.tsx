// Operator console → Workspaces: every workspace, newest first, searched by name, address or id,
// with its plan and how much it holds.
import Link from 'next/link';
import { PageHeader } from '@/app/components/page-header';
import { hrefWith, Pager } from '@/app/components/pager';
import { SearchForm } from '@/app/components/search-form';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent } from '@/app/components/ui/card';
import { requireOperator } from '@/app/lib/operator';
import { pageRequest } from '@/app/lib/paging';
import { searchWorkspaces } from '@/app/lib/queries/operator';
import { formatBytes } from '@/app/admin/_components/format';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Workspaces · Console' };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

export default async function WorkspacesPage({ searchParams }: Props) {
  await requireOperator('/admin/workspaces');
  const query = await searchParams;
  const asked = pageRequest(query);
  const result = await searchWorkspaces(asked);
  return (
    <>
      <PageHeader title="Workspaces" description="Every workspace, its plan and what it holds." />
      <div className="mb-4">
        <SearchForm
          id="workspace-search"
          path="/admin/workspaces"
          name="q"
          value={asked.q}
          label="Search workspaces by name, address or id"
          placeholder="name, address or id"
          clearHref="/admin/workspaces"
        />
      </div>
      <Card>
        <CardContent className="pt-6">
          {result.items.length === 0 ? (
            <p className="text-sm text-muted-foreground">No workspaces match.</p>
          ) : (
            <ul className="divide-y" aria-label="Workspaces">
              {result.items.map((w) => (
                <li key={w.id} className="flex flex-col gap-1 py-3 sm:flex-row sm:items-center sm:gap-4">
                  <div className="min-w-0 flex-1">
                    <Link href={`/admin/workspaces/${w.id}`} className="font-medium hover:underline">
                      {w.name}
                    </Link>
                    <span className="block text-xs text-muted-foreground">/w/{w.slug}</span>
                  </div>
                  <div className="flex flex-wrap items-center gap-1">
                    <Badge variant="outline">{w.plan}</Badge>
                    {w.status !== 'active' ? <Badge variant="warning">{w.status}</Badge> : null}
                  </div>
                  <span className="text-xs text-muted-foreground sm:w-56 sm:text-right">
                    {w.members} members · {w.projects} projects · {formatBytes(w.storageBytes)}
                  </span>
                </li>
              ))}
            </ul>
          )}
          <Pager
            label="Workspaces"
            result={result}
            href={(n) => hrefWith('/admin/workspaces', query, { page: n })}
            className="mt-4"
          />
        </CardContent>
      </Card>
    </>
  );
}
