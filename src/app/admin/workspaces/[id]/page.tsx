// Operator console → one workspace: its members and their roles, its plan and subscription, and
// what it holds (members, projects, storage).
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { PageHeader } from '@/app/components/page-header';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent, CardHeader, CardTitle } from '@/app/components/ui/card';
import { formatBytes } from '@/app/admin/_components/format';
import { requireOperator } from '@/app/lib/operator';
import { workspaceDetail } from '@/app/lib/queries/operator';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Workspace · Console' };

export default async function WorkspacePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  await requireOperator(`/admin/workspaces/${encodeURIComponent(id)}`);
  const w = await workspaceDetail(id);
  if (!w) notFound();
  const figures = [
    ['Members', String(w.members)],
    ['Projects', String(w.projects)],
    ['Storage', formatBytes(w.storageBytes)],
    ['Plan', `${w.plan} (${w.status})`],
  ];
  return (
    <>
      <PageHeader title={w.name} description={<span className="font-mono break-all">{w.id}</span>} />
      <dl className="mb-6 grid grid-cols-2 gap-3 sm:grid-cols-4">
        {figures.map(([label, value]) => (
          <div key={label} className="rounded-lg border bg-surface p-3">
            <dt className="text-xs text-muted-foreground">{label}</dt>
            <dd className="text-lg font-semibold">{value}</dd>
          </div>
        ))}
      </dl>
      <Card aria-labelledby="members">
        <CardHeader>
          <CardTitle id="members">Members</CardTitle>
        </CardHeader>
        <CardContent>
          <ul className="divide-y text-sm">
            {w.memberList.map((m) => (
              <li key={m.userId} className="flex justify-between gap-2 py-2">
                <Link href={`/admin/users/${m.userId}`} className="min-w-0 break-all hover:underline">
                  {m.email ?? m.userId}
                </Link>
                <Badge variant="outline">{m.role}</Badge>
              </li>
            ))}
          </ul>
        </CardContent>
      </Card>
      <Card aria-labelledby="subscription" className="mt-6">
        <CardHeader>
          <CardTitle id="subscription">Subscription</CardTitle>
        </CardHeader>
        <CardContent className="text-sm">
          {w.subscription ? (
            <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-1">
              <dt className="text-muted-foreground">Period ends</dt>
              <dd>{w.subscription.currentPeriodEnd?.toISOString().slice(0, 10) ?? '—'}</dd>
              <dt className="text-muted-foreground">Cancels at period end</dt>
              <dd>{w.subscription.cancelAtPeriodEnd ? 'yes' : 'no'}</dd>
              <dt className="text-muted-foreground">Past due since</dt>
              <dd>{w.subscription.pastDueSince?.toISOString().slice(0, 10) ?? '—'}</dd>
              <dt className="text-muted-foreground">Stripe customer</dt>
              <dd className="break-all">{w.subscription.stripeCustomerId ?? '—'}</dd>
            </dl>
          ) : (
            <p className="text-muted-foreground">On the free plan; never subscribed.</p>
          )}
        </CardContent>
      </Card>
    </>
  );
}
