'use client';
// The billing page's buttons: each opens Stripe (Checkout for a plan, or the customer portal)
// and says so while the server prepares the session.
import { ArrowUpRight, CreditCard } from 'lucide-react';
import { openPortalAction, startCheckoutAction } from '@/app/actions/billing';
import { SubmitButton } from '@/app/components/ui/submit-button';

export function UpgradeButton({
  slug,
  workspaceId,
  plan,
}: {
  slug: string;
  workspaceId: string;
  plan: { id: string; name: string };
}) {
  return (
    <form action={startCheckoutAction}>
      <input type="hidden" name="slug" value={slug} />
      <input type="hidden" name="workspace_id" value={workspaceId} />
      <input type="hidden" name="plan" value={plan.id} />
      <SubmitButton pendingText="Opening checkout…" className="w-full">
        Upgrade to {plan.name}
        <ArrowUpRight aria-hidden="true" />
      </SubmitButton>
    </form>
  );
}

export function PortalButton({ slug, workspaceId }: { slug: string; workspaceId: string }) {
  return (
    <form action={openPortalAction}>
      <input type="hidden" name="slug" value={slug} />
      <input type="hidden" name="workspace_id" value={workspaceId} />
      <SubmitButton variant="outline" pendingText="Opening…">
        <CreditCard aria-hidden="true" />
        Manage billing
      </SubmitButton>
    </form>
  );
}
