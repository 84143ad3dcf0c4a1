// Operator console → Audit log: every workspace's lines and the account events together, filtered
// by workspace, actor, action and dates (and "console actions only"), searched, exported as CSV or
// JSON. Lines and their wording come from the same query layer as a workspace's audit page.
import { PageHeader } from '@/app/components/page-header';
import { hrefWith, Pager } from '@/app/components/pager';
import { RelativeTime } from '@/app/components/relative-time';
import { Badge } from '@/app/components/ui/badge';
import { AuditExportLinks } from '@/app/components/audit-export-links';
import { Button } from '@/app/components/ui/button';
import { Card, CardContent, CardHeader, CardTitle } from '@/app/components/ui/card';
import { Input, Label } from '@/app/components/ui/input';
import { requireOperator } from '@/app/lib/operator';
import { pageRequest } from '@/app/lib/paging';
import { describeAudit } from '@/app/lib/queries/audit';
import { operatorAuditFilters, operatorAuditPage } from '@/app/lib/queries/operator-audit';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Audit log · Console' };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

export default async function ConsoleAuditPage({ searchParams }: Props) {
  await requireOperator('/admin/audit');
  const query = await searchParams;
  const filters = operatorAuditFilters(query);
  const asked = pageRequest(query);
  const result = await operatorAuditPage(filters, asked);
  const current = {
    action: filters.action,
    actor: filters.actor,
    from: filters.from,
    to: filters.to,
    workspace: filters.workspace,
    operator: filters.operatorOnly ? '1' : '',
    q: asked.q,
  };
  const exportHref = (format: 'csv' | 'json') => hrefWith('/admin/audit/export', {}, { ...current, format });
  return (
    <>
      <PageHeader title="Audit log" description="Every workspace and account, newest first." />
      <Card aria-labelledby="console-audit-filters">
        <CardHeader>
          <CardTitle id="console-audit-filters">Filter</CardTitle>
        </CardHeader>
        <CardContent>
          <form
            method="get"
            action="/admin/audit"
            className="grid grid-cols-1 gap-3 sm:grid-cols-3 lg:grid-cols-4"
          >
            <div className="grid gap-1">
              <Label htmlFor="ca-action">Action</Label>
              <Input
                id="ca-action"
                name="action"
                defaultValue={filters.action}
                placeholder="e.g. operator.user_banned"
                maxLength={64}
              />
            </div>
            <div className="grid gap-1">
              <Label htmlFor="ca-actor">Actor</Label>
              <Input
                id="ca-actor"
                name="actor"
                defaultValue={filters.actor}
                placeholder="e-mail or user id"
                maxLength={100}
              />
            </div>
            <div className="grid gap-1">
              <Label htmlFor="ca-workspace">Workspace id</Label>
              <Input id="ca-workspace" name="workspace" defaultValue={filters.workspace} maxLength={36} />
            </div>
            <div className="grid gap-1">
              <Label htmlFor="ca-q">Search</Label>
              <Input
                id="ca-q"
                name="q"
                defaultValue={asked.q}
                placeholder="address, target, details"
                maxLength={100}
              />
            </div>
            <div className="grid gap-1">
              <Label htmlFor="ca-from">From</Label>
              <Input id="ca-from" name="from" type="date" defaultValue={filters.from} />
            </div>
            <div className="grid gap-1">
              <Label htmlFor="ca-to">To</Label>
              <Input id="ca-to" name="to" type="date" defaultValue={filters.to} />
            </div>
            <label className="flex items-center gap-2 self-end text-sm sm:h-9">
              <input
                type="checkbox"
                name="operator"
                value="1"
                defaultChecked={filters.operatorOnly}
                className="size-4"
              />
              Console actions only
            </label>
            <div className="flex items-end gap-2">
              <Button type="submit">Apply</Button>
            </div>
          </form>
          <AuditExportLinks hrefFor={exportHref} />
        </CardContent>
      </Card>
      <Card aria-labelledby="console-audit-lines" className="mt-6">
        <CardHeader>
          <CardTitle id="console-audit-lines">Events</CardTitle>
        </CardHeader>
        <CardContent>
          {result.items.length === 0 ? (
            <p className="text-sm text-muted-foreground">No events match.</p>
          ) : (
            <ul className="divide-y text-sm">
              {result.items.map((line) => (
                <li
                  key={line.id}
                  className="flex flex-col gap-1 py-2 sm:flex-row sm:gap-4"
                  data-action={line.action}
                >
                  <span className="text-xs whitespace-nowrap text-muted-foreground sm:w-28">
                    <RelativeTime date={line.createdAt} />
                  </span>
                  <div className="min-w-0 flex-1">
                    <span className="font-medium">{describeConsole(line)}</span>
                    {'operator' in line.details ? (
                      <Badge variant="primary" className="ml-2">
                        console
                      </Badge>
                    ) : null}
                    <span className="block text-xs break-all text-muted-foreground">
                      {line.action} · by {line.actorEmail ?? line.actorType} · {line.ipAddress ?? '—'}
                      {line.workspaceId ? ` · workspace ${line.workspaceId}` : ''}
                    </span>
                  </div>
                </li>
              ))}
            </ul>
          )}
          <Pager
            label="Audit events"
            result={result}
            href={(n) => hrefWith('/admin/audit', query, { page: n })}
            className="mt-4"
          />
        </CardContent>
      </Card>
    </>
  );
}

/** The console's own actions told in words; the rest as a workspace's log tells them. */
function describeConsole(line: { action: string; details: Record<string, unknown> }): string {
  switch (line.action) {
    case 'operator.user_banned':
      return 'Account banned from the console';
    case 'operator.user_unbanned':
      return 'Ban lifted from the console';
    case 'operator.user_deleted':
      return 'Account deleted from the console';
    case 'operator.session_revoked':
      return 'Session ended from the console';
    case 'operator.sessions_revoked':
      return 'All sessions ended from the console';
    case 'operator.mail_retried':
      return 'Failed e-mail queued again';
    case 'user_modified':
      // staff added or taken away with npm run operator:staff
      if (line.details.staff === 'granted') return 'Made staff for the operator console';
      if (line.details.staff === 'revoked') return 'No longer staff for the operator console';
      return describeAudit(line);
    default:
      return describeAudit(line);
  }
}
