// The workspace's plan and billing state, readable by every member. Checkout and the customer
// portal open from here for owners once billing is configured.
import { openPortalAction, startCheckoutAction } from '@/app/actions/billing';
import { asUser, requireWorkspace } from '@/app/lib/db';
import { getRuntime } from '@/server/runtime';
import { Flash } from '@/app/components/flash';
import { WorkspaceNav } from '@/app/w/[slug]/nav';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Billing' };

export default async function BillingPage({ params }: { params: Promise<{ slug: string }> }) {
  const { user, workspace } = await requireWorkspace(params, '/billing');
  const subscription = await asUser(user, async (tx) => {
    const r = await tx.query<{
      plan: string;
      status: string;
      current_period_end: Date | null;
      past_due_since: Date | null;
    }>(
      'select plan, status, current_period_end, past_due_since from public.subscriptions where workspace_id = $1',
      [workspace.id],
    );
    return r.rows[0];
  });
  const { config } = getRuntime();
  const configured = Boolean(config.stripeSecretKey);
  const plans = config.billingPlans;
  return (
    <>
      <h1>{workspace.name}: billing</h1>
      <WorkspaceNav
        slug={workspace.slug}
        current="/billing"
        role={workspace.role}
        pastDue={workspace.pastDue}
      />
      <Flash />
      <section className="card">
        <p>
          Plan: <strong>{subscription?.plan ?? 'free'}</strong> · status {subscription?.status ?? 'active'}
          {subscription?.current_period_end
            ? ` · renews ${new Date(subscription.current_period_end).toISOString().slice(0, 10)}`
            : ''}
        </p>
        {configured ? null : <p className="muted">Billing is not configured on this server.</p>}
      </section>
      {configured && workspace.role === 'owner' ? (
        <section className="card" aria-labelledby="plans">
          <h2 id="plans">Plans</h2>
          {plans.map((plan) => (
            <form key={plan.id} action={startCheckoutAction} className="inline">
              <input type="hidden" name="slug" value={workspace.slug} />
              <input type="hidden" name="workspace_id" value={workspace.id} />
              <input type="hidden" name="plan" value={plan.id} />
              <button type="submit" className="button">
                Upgrade to {plan.name}
              </button>{' '}
            </form>
          ))}
          <form action={openPortalAction} className="inline">
            <input type="hidden" name="slug" value={workspace.slug} />
            <input type="hidden" name="workspace_id" value={workspace.id} />
            <button type="submit" className="button secondary">
              Manage billing
            </button>
          </form>
        </section>
      ) : null}
    </>
  );
}
