// A workspace's security audit log, for its owners and admins: who did what, to whom, when and
// from where, newest first; filtered by action, actor and dates, searched, a page at a time; and
// exported as CSV or JSON with the same filters (each export is itself a line of the log).
import { PageHeader } from '@/app/components/page-header';
import { hrefWith, Pager } from '@/app/components/pager';
import { RelativeTime } from '@/app/components/relative-time';
import { AuditExportLinks } from '@/app/components/audit-export-links';
import { Button } from '@/app/components/ui/button';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { Input, Label, Select } from '@/app/components/ui/input';
import { requireWorkspace } from '@/app/lib/db';
import { pageRequest } from '@/app/lib/paging';
import { AUDIT_ACTIONS, auditFilters, auditPage, describeAudit } from '@/app/lib/queries/audit';
import { workspaceTitle } from '@/app/lib/titles';

export const dynamic = 'force-dynamic';

type Params = { params: Promise<{ slug: string }> };
type Props = Params & { searchParams: Promise<Record<string, string | string[] | undefined>> };

export const generateMetadata = ({ params }: Params) => workspaceTitle(params, 'Audit log');

export default async function AuditPage({ params, searchParams }: Props) {
  const { user, workspace } = await requireWorkspace(params, '/audit');
  const query = await searchParams;
  const path = `/w/${workspace.slug}/audit`;
  if (workspace.role !== 'admin' && workspace.role !== 'owner') {
    return (
      <>
        <PageHeader title="Audit log" description="Who changed what in this workspace, and from where." />
        <p className="text-sm text-muted-foreground">Only owners and admins see the audit log.</p>
      </>
    );
  }
  const filters = auditFilters(query);
  const asked = pageRequest(query);
  const result = await auditPage(user, workspace.id, filters, asked);
  const current = { ...filters, q: asked.q };
  const exportHref = (format: 'csv' | 'json') => hrefWith(`${path}/export`, {}, { ...current, format });
  return (
    <>
      <PageHeader title="Audit log" description="Who changed what in this workspace, and from where." />
      <Card aria-labelledby="audit-filters">
        <CardHeader>
          <CardTitle id="audit-filters">Filter</CardTitle>
          <CardDescription>
            Exports hold the lines these filters select, and are recorded here too.
          </CardDescription>
        </CardHeader>
        <CardContent>
          <form method="get" action={path} className="grid grid-cols-1 gap-3 sm:grid-cols-3 lg:grid-cols-6">
            <div className="grid gap-1">
              <Label htmlFor="audit-action">Action</Label>
              <Select id="audit-action" name="action" defaultValue={filters.action}>
                <option value="">All actions</option>
                {AUDIT_ACTIONS.map((a) => (
                  <option key={a} value={a}>
                    {a}
                  </option>
                ))}
              </Select>
            </div>
            <div className="grid gap-1">
              <Label htmlFor="audit-actor">Actor</Label>
              <Input
                id="audit-actor"
                name="actor"
                defaultValue={filters.actor}
                placeholder="e-mail or user id"
                maxLength={100}
              />
            </div>
            <div className="grid gap-1">
              <Label htmlFor="audit-from">From</Label>
              <Input id="audit-from" name="from" type="date" defaultValue={filters.from} />
            </div>
            <div className="grid gap-1">
              <Label htmlFor="audit-to">To</Label>
              <Input id="audit-to" name="to" type="date" defaultValue={filters.to} />
            </div>
            <div className="grid gap-1">
              <Label htmlFor="audit-q">Search</Label>
              <Input
                id="audit-q"
                name="q"
                defaultValue={asked.q}
                placeholder="address, target, details"
                maxLength={100}
              />
            </div>
            <div className="flex items-end gap-2">
              <Button type="submit">Apply</Button>
            </div>
          </form>
          <AuditExportLinks hrefFor={exportHref} />
        </CardContent>
      </Card>
      <Card aria-labelledby="audit-lines" className="mt-6">
        <CardHeader>
          <CardTitle id="audit-lines">Events</CardTitle>
        </CardHeader>
        <CardContent>
          {result.items.length === 0 ? (
            <p className="text-sm text-muted-foreground">No events match.</p>
          ) : (
            <div className="overflow-x-auto">
              <table className="w-full text-left text-sm">
                <thead className="text-muted-foreground">
                  <tr>
                    <th className="py-2 pr-3 font-medium">When</th>
                    <th className="py-2 pr-3 font-medium">Event</th>
                    <th className="hidden py-2 pr-3 font-medium sm:table-cell">By</th>
                    <th className="hidden py-2 pr-3 font-medium sm:table-cell">From</th>
                  </tr>
                </thead>
                <tbody>
                  {result.items.map((line) => (
                    <tr key={line.id} className="border-t align-top" data-action={line.action}>
                      <td className="py-2 pr-3 whitespace-nowrap">
                        <RelativeTime date={line.createdAt} />
                      </td>
                      <td className="py-2 pr-3">
                        <span className="font-medium">{describeAudit(line)}</span>
                        <span className="block text-xs text-muted-foreground">{line.action}</span>
                        {/* On a phone the table keeps two columns; who and where go under the event. */}
                        <span className="block text-xs text-muted-foreground break-words sm:hidden">
                          {auditActor(line)} · {line.ipAddress ?? '—'}
                        </span>
                      </td>
                      <td className="hidden py-2 pr-3 sm:table-cell">{auditActor(line)}</td>
                      <td className="hidden py-2 pr-3 sm:table-cell">
                        <span>{line.ipAddress ?? '—'}</span>
                        {line.userAgent ? (
                          <span
                            className="block max-w-64 truncate text-xs text-muted-foreground"
                            title={line.userAgent}
                          >
                            {line.userAgent}
                          </span>
                        ) : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager
            label="Audit events"
            result={result}
            href={(n) => hrefWith(path, query, { page: n })}
            className="mt-4"
          />
        </CardContent>
      </Card>
    </>
  );
}

/** Who made an audit line, as the log names them: the person's address, else the kind of caller. */
function auditActor(line: { actorEmail: string | null; actorType: string }): string {
  if (line.actorEmail) return line.actorEmail;
  if (line.actorType === 'user') return 'a former member';
  if (line.actorType === 'system') return 'Tenantry';
  return line.actorType;
}
