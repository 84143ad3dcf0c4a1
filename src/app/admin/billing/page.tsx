// Operator console → Billing: each workspace's subscription (those needing attention first) and
// the newest payment webhook events with how they were handled.
import Link from 'next/link';
import { PageHeader } from '@/app/components/page-header';
import { hrefWith, Pager } from '@/app/components/pager';
import { RelativeTime } from '@/app/components/relative-time';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent, CardHeader, CardTitle } from '@/app/components/ui/card';
import { requireOperator } from '@/app/lib/operator';
import { pageRequest } from '@/app/lib/paging';
import { recentPaymentEvents, subscriptions } from '@/app/lib/queries/operator';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Billing · Console' };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

const EVENT_BADGE = {
  processed: 'success',
  ignored: 'default',
  processing: 'warning',
  failed: 'danger',
} as const;

export default async function BillingPage({ searchParams }: Props) {
  await requireOperator('/admin/billing');
  const query = await searchParams;
  const [subs, events] = await Promise.all([subscriptions(pageRequest(query)), recentPaymentEvents(50)]);
  return (
    <>
      <PageHeader title="Billing" description="Subscriptions and the payment provider's events." />
      <Card aria-labelledby="subs">
        <CardHeader>
          <CardTitle id="subs">Subscriptions</CardTitle>
        </CardHeader>
        <CardContent>
          {subs.items.length === 0 ? (
            <p className="text-sm text-muted-foreground">No workspace has subscribed yet.</p>
          ) : (
            <ul className="divide-y text-sm">
              {subs.items.map((s) => (
                <li
                  key={s.workspaceId}
                  className="flex flex-col gap-1 py-2 sm:flex-row sm:items-center sm:gap-4"
                >
                  <Link
                    href={`/admin/workspaces/${s.workspaceId}`}
                    className="min-w-0 flex-1 font-medium hover:underline"
                  >
                    {s.name}
                  </Link>
                  <div className="flex flex-wrap gap-1">
                    <Badge variant="outline">{s.plan}</Badge>
                    <Badge variant={s.status === 'active' ? 'success' : 'warning'}>{s.status}</Badge>
                    {s.cancelAtPeriodEnd ? <Badge variant="default">cancels</Badge> : null}
                  </div>
                </li>
              ))}
            </ul>
          )}
          <Pager
            label="Subscriptions"
            result={subs}
            href={(n) => hrefWith('/admin/billing', query, { page: n })}
            className="mt-4"
          />
        </CardContent>
      </Card>
      <Card aria-labelledby="events" className="mt-6">
        <CardHeader>
          <CardTitle id="events">Recent payment events</CardTitle>
        </CardHeader>
        <CardContent>
          {events.length === 0 ? (
            <p className="text-sm text-muted-foreground">No events received yet.</p>
          ) : (
            <ul className="divide-y text-sm">
              {events.map((e) => (
                <li
                  key={e.id}
                  className="flex flex-col gap-1 py-2 sm:flex-row sm:items-center sm:gap-4"
                  data-event={e.id}
                >
                  <div className="min-w-0 flex-1">
                    <span className="font-medium">{e.type}</span>
                    <span className="block font-mono text-xs break-all text-muted-foreground">{e.id}</span>
                    {e.lastError ? (
                      <span className="block text-xs text-danger-text">{e.lastError}</span>
                    ) : null}
                  </div>
                  <Badge variant={EVENT_BADGE[e.status as keyof typeof EVENT_BADGE] ?? 'default'}>
                    {e.status}
                  </Badge>
                  <span className="text-xs text-muted-foreground">
                    <RelativeTime date={e.receivedAt} />
                  </span>
                </li>
              ))}
            </ul>
          )}
        </CardContent>
      </Card>
    </>
  );
}
