// The workspace's plan: its state, seats, projects and storage used against the plan's limits,
// and the way up. Owners upgrade through Stripe Checkout and manage payment in the customer
// portal; when payments are not set up, owners see how to set them up and everyone else just sees
// the plan.
import { Info } from 'lucide-react';
import { PageHeader } from '@/app/components/page-header';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { cn } from '@/app/components/ui/cn';
import { requireWorkspace } from '@/app/lib/db';
import { formatBytes } from '@/app/lib/file-checks';
import { billingState } from '@/app/lib/queries/billing';
import { workspaceTitle } from '@/app/lib/titles';
import { PortalButton, UpgradeButton } from '@/app/w/[slug]/billing/billing-buttons';
import { getRuntime } from '@/server/runtime';

export const dynamic = 'force-dynamic';

type Params = { params: Promise<{ slug: string }> };

export const generateMetadata = ({ params }: Params) => workspaceTitle(params, 'Billing');

const STATUS: Record<string, { label: string; variant: 'success' | 'warning' | 'danger' | 'default' }> = {
  active: { label: 'Active', variant: 'success' },
  trialing: { label: 'Trial', variant: 'success' },
  past_due: { label: 'Payment overdue', variant: 'danger' },
  unpaid: { label: 'Unpaid', variant: 'danger' },
  canceled: { label: 'Cancelled', variant: 'default' },
  incomplete: { label: 'Incomplete', variant: 'warning' },
};

function Meter({
  label,
  used,
  limit,
  format = String,
}: {
  label: string;
  used: number;
  limit: number | null;
  /** how an amount is written (bytes as "1.5 MB") */
  format?: (n: number) => string;
}) {
  const share = limit ? Math.min(1, used / limit) : 0;
  return (
    <div className="grid grid-cols-1 gap-2">
      <div className="flex items-baseline justify-between gap-2 text-sm">
        <span className="font-medium">{label}</span>
        <span className="text-muted-foreground" data-usage={label.toLowerCase()}>
          {limit === null ? `${format(used)} · unlimited` : `${format(used)} of ${format(limit)}`}
        </span>
      </div>
      <div
        role="meter"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={limit ?? used}
        aria-valuenow={used}
        aria-valuetext={limit === null ? `${format(used)}, unlimited` : `${format(used)} of ${format(limit)}`}
        className="h-2 overflow-hidden rounded-full bg-muted"
      >
        <div
          className={cn(
            'h-full rounded-full',
            share >= 1 ? 'bg-destructive' : share >= 0.8 ? 'bg-warning-text' : 'bg-primary',
          )}
          style={{ width: `${limit === null ? 0 : Math.max(share * 100, used > 0 ? 2 : 0)}%` }}
        />
      </div>
    </div>
  );
}

export default async function BillingPage({ params }: Params) {
  const { user, workspace } = await requireWorkspace(params, '/billing');
  const state = await billingState(user, workspace.id);
  const { config } = getRuntime();
  const configured = Boolean(config.stripeSecretKey);
  const owner = workspace.role === 'owner';
  const planName =
    state.plan === 'free'
      ? 'Free'
      : (config.billingPlans.find((p) => p.id === state.plan)?.name ?? state.plan);
  const status = STATUS[state.status] ?? { label: state.status, variant: 'default' as const };
  const upgrades = config.billingPlans.filter((p) => p.id !== state.plan);
  return (
    <>
      <PageHeader title="Billing" description={`The plan of ${workspace.name} and what it allows.`} />
      <div className="grid grid-cols-1 gap-6">
        <Card aria-labelledby="plan">
          <CardHeader className="flex-row flex-wrap items-start justify-between gap-3">
            <div>
              <CardTitle id="plan">
                Plan: <span data-plan={state.plan}>{planName}</span>
              </CardTitle>
              <CardDescription>
                Status{' '}
                <Badge variant={status.variant} data-status={state.status}>
                  {status.label}
                </Badge>
                {state.currentPeriodEnd
                  ? ` · ${state.cancelAtPeriodEnd ? 'ends' : 'renews'} ${new Date(state.currentPeriodEnd).toISOString().slice(0, 10)}`
                  : ''}
              </CardDescription>
            </div>
            {configured && owner ? <PortalButton slug={workspace.slug} workspaceId={workspace.id} /> : null}
          </CardHeader>
          <CardContent className="grid grid-cols-1 gap-5 sm:grid-cols-2">
            <Meter label="Seats" used={state.seatsUsed} limit={state.seats} />
            <Meter label="Projects" used={state.projectsUsed} limit={state.projects} />
            <Meter label="Storage" used={state.storageUsed} limit={state.storage} format={formatBytes} />
            <p className="text-xs text-muted-foreground sm:col-span-2">
              Seats count members and pending invitations. Storage counts the files of the workspace&apos;s
              projects, its logo and its shared files.
              {state.readOnly ? ' Projects are read-only until the overdue payment is made.' : ''}
            </p>
          </CardContent>
        </Card>
        {configured && owner && upgrades.length > 0 ? (
          <section aria-labelledby="plans">
            <h2 id="plans" className="mb-3 text-base font-semibold">
              Upgrade
            </h2>
            <ul className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3">
              {upgrades.map((plan) => (
                <li key={plan.id} className="flex flex-col gap-4 rounded-lg border bg-card p-5 shadow-xs">
                  <div>
                    <h3 className="font-semibold">{plan.name}</h3>
                    <p className="mt-1 text-sm text-muted-foreground">
                      {plan.seats ? `${plan.seats} seats` : 'Unlimited seats'} ·{' '}
                      {plan.projects ? `${plan.projects} projects` : 'unlimited projects'}
                    </p>
                  </div>
                  <UpgradeButton
                    slug={workspace.slug}
                    workspaceId={workspace.id}
                    plan={{ id: plan.id, name: plan.name }}
                  />
                </li>
              ))}
            </ul>
          </section>
        ) : null}
        {!configured && owner ? (
          <Card aria-labelledby="setup">
            <CardHeader>
              <CardTitle id="setup" className="flex items-center gap-2">
                <Info className="size-4 text-primary" aria-hidden="true" />
                Set up payments to offer paid plans
              </CardTitle>
              <CardDescription>
                Everything else works without it. Whoever runs this server sets these and restarts it:
              </CardDescription>
            </CardHeader>
            <CardContent>
              <ol className="grid list-decimal gap-2 pl-5 text-sm">
                <li>
                  <code>STRIPE_SECRET_KEY</code>: the Stripe secret key of your account.
                </li>
                <li>
                  <code>BILLING_PLANS</code>: the paid plans, with their Stripe price and limits.
                </li>
                <li>
                  A Stripe webhook to <code>/api/billing/webhook</code>, its signing secret in{' '}
                  <code>PAYMENT_WEBHOOK_SECRET</code>.
                </li>
              </ol>
            </CardContent>
          </Card>
        ) : null}
        {!owner && state.plan === 'free' && configured ? (
          <p className="text-sm text-muted-foreground">Owners of this workspace can upgrade its plan.</p>
        ) : null}
      </div>
    </>
  );
}
