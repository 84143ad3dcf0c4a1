// The workspace's plan: its state, seats, projects and storage used against the plan's limits,
// and every plan with its price and what it includes. Owners upgrade through Stripe Checkout and
// manage payment in the customer portal; others are told that owners decide. When payments are
// not set up, everyone sees a neutral notice: how to set them up is the operator's business (the
// start-up log and the readiness probe say it), never the customers'.
import { Check, Info } from 'lucide-react';
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
import { count } from '@/server/text/counts';

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

/** A plan's limits as lines a customer reads ("25 seats", "Unlimited projects", "10 GB of files"). */
function includedIn(plan: {
  seats: number | null;
  projects: number | null;
  storageBytes?: number | null;
}): string[] {
  const limit = (n: number | null, one: string) => (n === null ? `Unlimited ${one}s` : count(n, one));
  return [
    limit(plan.seats, 'seat'),
    limit(plan.projects, 'project'),
    plan.storageBytes === undefined
      ? 'Unlimited files'
      : plan.storageBytes === null
        ? 'Unlimited files'
        : `${formatBytes(plan.storageBytes)} of files`,
  ];
}

export default async function BillingPage({ params }: Params) {
  const { user, workspace } = await requireWorkspace(params, '/billing');
  const state = await billingState(user, workspace.id);
  const { config } = getRuntime();
  const configured = Boolean(config.stripeSecretKey) && config.billingPlans.length > 0;
  const owner = workspace.role === 'owner';
  const planName =
    state.plan === 'free'
      ? 'Free'
      : (config.billingPlans.find((p) => p.id === state.plan)?.name ?? state.plan);
  const status = STATUS[state.status] ?? { label: state.status, variant: 'default' as const };
  // Every plan customers can be on, the free one first, each with what it includes in words.
  const offered = [
    {
      id: 'free',
      name: 'Free',
      price: 'No charge' as string | undefined,
      includes: includedIn({
        seats: config.freePlanSeats,
        projects: config.freePlanProjects,
        storageBytes: config.storage.freePlanStorageBytes,
      }),
    },
    ...(configured
      ? config.billingPlans.map((plan) => ({
          id: plan.id,
          name: plan.name,
          price: plan.price,
          includes: [...includedIn(plan), ...(plan.features ?? [])],
        }))
      : []),
  ];
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
        <section aria-labelledby="plans">
          <h2 id="plans" className="mb-3 text-base font-semibold">
            Plans
          </h2>
          <ul className="grid grid-cols-1 gap-4 sm:grid-cols-2 lg:grid-cols-3">
            {offered.map((plan) => {
              const current = plan.id === state.plan;
              return (
                <li
                  key={plan.id}
                  data-plan-card={plan.id}
                  aria-current={current ? 'true' : undefined}
                  className={cn(
                    'flex flex-col gap-4 rounded-lg border bg-card p-5 shadow-xs',
                    current && 'border-primary ring-1 ring-primary',
                  )}
                >
                  <div>
                    <h3 className="flex flex-wrap items-center gap-2 font-semibold">
                      {plan.name}
                      {current ? <Badge>Current plan</Badge> : null}
                    </h3>
                    {plan.price ? (
                      <p className="mt-1 text-lg font-semibold" data-price>
                        {plan.price}
                      </p>
                    ) : null}
                  </div>
                  <ul className="grid flex-1 gap-1.5 text-sm" aria-label={`${plan.name} includes`}>
                    {plan.includes.map((line) => (
                      <li key={line} className="flex gap-2">
                        <Check className="mt-0.5 size-4 shrink-0 text-primary" aria-hidden="true" />
                        <span>{line}</span>
                      </li>
                    ))}
                  </ul>
                  {current || plan.id === 'free' || !configured ? null : owner ? (
                    <UpgradeButton
                      slug={workspace.slug}
                      workspaceId={workspace.id}
                      plan={{ id: plan.id, name: plan.name }}
                    />
                  ) : null}
                </li>
              );
            })}
          </ul>
          {configured && !owner ? (
            <p className="mt-3 text-sm text-muted-foreground">
              Owners of this workspace can change its plan.
            </p>
          ) : null}
        </section>
        {configured ? null : (
          <p className="flex items-start gap-2 text-sm text-muted-foreground" data-billing-notice>
            <Info className="mt-0.5 size-4 shrink-0" aria-hidden="true" />
            Paid plans are not available here yet. Everything on the free plan keeps working.
          </p>
        )}
      </div>
    </>
  );
}
