// In charge of what each payment event does to a workspace's billing state: one handler per
// event type (adding a type is adding an entry). Handlers run inside the event-log transaction,
// find the workspace by the Stripe customer it is linked to (our own metadata only for a
// workspace with no customer yet, so events arriving before the checkout that links them still
// apply), and never let an older event overwrite newer state: every change is guarded by the
// event's creation time against the last one applied to that subscription.
import type { Tx } from '../db/transactions.js';
import { enqueueMail } from '../mail/outbox.js';
import { RefusedEvent, type HandlerRegistry, type HandlerOutcome } from './events.js';
import { billingUrl } from './links.js';
import { planForPrice, type Plan } from './plans.js';
import type { VerifiedEvent } from './verify.js';

export interface BillingHandlerOptions {
  plans: readonly Plan[];
  appUrl: string;
}

type StripeObject = Record<string, unknown>;

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const num = (value: unknown): number | null => (typeof value === 'number' ? value : null);
const obj = (value: unknown): StripeObject =>
  value && typeof value === 'object' ? (value as StripeObject) : {};
const idOf = (value: unknown): string | null => str(value) ?? str(obj(value).id);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The workspace an event concerns. Once a workspace is linked to a Stripe customer, only events
 * naming that customer touch it: the customer (then the subscription) decides, whatever the
 * metadata says. Our metadata only finds a workspace that has no customer yet (an event that
 * overtakes the checkout linking it), and never relinks one whose customer is another.
 */
async function workspaceFor(
  tx: Tx,
  hints: { workspaceId: string | null; subscriptionId: string | null; customerId: string | null },
): Promise<string> {
  const linked = await tx.query<{
    workspace_id: string;
    stripe_customer_id: string | null;
    stripe_subscription_id: string | null;
  }>(
    `select workspace_id, stripe_customer_id, stripe_subscription_id from public.subscriptions
     where ($1::text is not null and stripe_subscription_id = $1) or ($2::text is not null and stripe_customer_id = $2)`,
    [hints.subscriptionId, hints.customerId],
  );
  const byCustomer = linked.rows.find((r) => hints.customerId && r.stripe_customer_id === hints.customerId);
  const bySubscription = linked.rows.find(
    (r) => hints.subscriptionId && r.stripe_subscription_id === hints.subscriptionId,
  );
  if (byCustomer) {
    if (bySubscription && bySubscription.workspace_id !== byCustomer.workspace_id) {
      throw new RefusedEvent(
        `Refused: subscription ${hints.subscriptionId} belongs to another workspace than customer ${hints.customerId}`,
      );
    }
    return byCustomer.workspace_id;
  }
  if (bySubscription) {
    if (hints.customerId && bySubscription.stripe_customer_id) {
      throw new RefusedEvent(
        `Refused: subscription ${hints.subscriptionId} is linked to a workspace of another customer than ${hints.customerId}`,
      );
    }
    return bySubscription.workspace_id;
  }
  if (hints.workspaceId && UUID.test(hints.workspaceId)) {
    const named = await tx.query<{ stripe_customer_id: string | null }>(
      'select stripe_customer_id from public.subscriptions where workspace_id = $1',
      [hints.workspaceId],
    );
    const row = named.rows[0];
    if (row && row.stripe_customer_id) {
      throw new RefusedEvent(
        `Refused: the metadata names workspace ${hints.workspaceId}, which is linked to another customer than ${hints.customerId ?? '(none)'}`,
      );
    }
    if (row) return hints.workspaceId;
  }
  // Unknown for now: fail so the provider retries once the checkout has linked it.
  throw new Error('No workspace is linked to this payment event yet');
}

/** Applies `changes` only if this event is not older than the last one applied (order safety). */
async function applyIfNewer(
  tx: Tx,
  workspaceId: string,
  event: VerifiedEvent,
  changes: string,
  values: unknown[],
): Promise<HandlerOutcome> {
  const result = await tx.query(
    `update public.subscriptions set ${changes}, last_event_created = $2, updated_at = now()
     where workspace_id = $1 and (last_event_created is null or last_event_created <= $2)`,
    [workspaceId, event.created, ...values],
  );
  return (result.rowCount ?? 0) > 0 ? 'processed' : 'ignored';
}

/** Subscription fields in the current API (period end per item) and older ones (top level). */
function subscriptionFields(subscription: StripeObject) {
  const item = obj((obj(subscription.items).data as unknown[] | undefined)?.[0]);
  const periodEnd = num(item.current_period_end) ?? num(subscription.current_period_end);
  return {
    id: str(subscription.id),
    customer: idOf(subscription.customer),
    status: str(subscription.status) ?? 'incomplete',
    priceId: idOf(obj(item).price),
    periodEnd: periodEnd === null ? null : new Date(periodEnd * 1000),
    cancelAtPeriodEnd: subscription.cancel_at_period_end === true,
    workspaceId: str(obj(subscription.metadata).workspace_id),
  };
}

/** The subscription an invoice belongs to, in the current API and before 2025-03-31.basil. */
function invoiceFields(invoice: StripeObject) {
  const details = obj(obj(invoice.parent).subscription_details);
  const line = obj((obj(invoice.lines).data as unknown[] | undefined)?.[0]);
  const periodEnd = num(obj(line.period).end) ?? num(invoice.period_end);
  return {
    subscriptionId: idOf(details.subscription) ?? idOf(invoice.subscription),
    customer: idOf(invoice.customer),
    workspaceId: str(obj(details.metadata).workspace_id) ?? str(obj(invoice.metadata).workspace_id),
    periodEnd: periodEnd === null ? null : new Date(periodEnd * 1000),
    amountDue: num(invoice.amount_due),
    currency: str(invoice.currency),
    hostedInvoiceUrl: str(invoice.hosted_invoice_url),
  };
}

export function createBillingHandlers(options: BillingHandlerOptions): HandlerRegistry {
  const subscriptionChanged = async (tx: Tx, event: VerifiedEvent, deleted: boolean) => {
    const s = subscriptionFields(event.data.object);
    const workspaceId = await workspaceFor(tx, {
      workspaceId: s.workspaceId,
      subscriptionId: s.id,
      customerId: s.customer,
    });
    if (deleted) {
      return applyIfNewer(
        tx,
        workspaceId,
        event,
        `plan = 'free', status = 'canceled', cancel_at_period_end = false, past_due_since = null,
         current_period_end = $3, stripe_subscription_id = coalesce($4, stripe_subscription_id),
         stripe_customer_id = coalesce($5, stripe_customer_id)`,
        [s.periodEnd, s.id, s.customer],
      );
    }
    return applyIfNewer(
      tx,
      workspaceId,
      event,
      `plan = $3, status = $4, current_period_end = $5, cancel_at_period_end = $6, stripe_price_id = $7,
       stripe_subscription_id = coalesce($8, stripe_subscription_id), stripe_customer_id = coalesce($9, stripe_customer_id),
       past_due_since = case when $4 in ('past_due', 'unpaid') then coalesce(past_due_since, to_timestamp($2)) end`,
      [
        planForPrice(options.plans, s.priceId),
        s.status,
        s.periodEnd,
        s.cancelAtPeriodEnd,
        s.priceId,
        s.id,
        s.customer,
      ],
    );
  };

  return {
    'checkout.session.completed': async (tx, event) => {
      const session = event.data.object;
      if (session.mode !== 'subscription') return 'ignored';
      const workspaceId = await workspaceFor(tx, {
        workspaceId: str(session.client_reference_id) ?? str(obj(session.metadata).workspace_id),
        subscriptionId: idOf(session.subscription),
        customerId: idOf(session.customer),
      });
      // Linking is idempotent and order-free: it never touches the plan or the status.
      await tx.query(
        `update public.subscriptions set stripe_customer_id = coalesce($2, stripe_customer_id),
           stripe_subscription_id = coalesce($3, stripe_subscription_id), updated_at = now()
         where workspace_id = $1`,
        [workspaceId, idOf(session.customer), idOf(session.subscription)],
      );
      return 'processed';
    },
    'customer.subscription.created': (tx, event) => subscriptionChanged(tx, event, false),
    'customer.subscription.updated': (tx, event) => subscriptionChanged(tx, event, false),
    'customer.subscription.deleted': (tx, event) => subscriptionChanged(tx, event, true),
    'invoice.payment_succeeded': async (tx, event) => {
      const invoice = invoiceFields(event.data.object);
      if (!invoice.subscriptionId) return 'ignored'; // a one-off invoice, not a subscription
      const workspaceId = await workspaceFor(tx, {
        workspaceId: invoice.workspaceId,
        subscriptionId: invoice.subscriptionId,
        customerId: invoice.customer,
      });
      return applyIfNewer(
        tx,
        workspaceId,
        event,
        `past_due_since = null, status = case when status in ('past_due', 'unpaid', 'incomplete') then 'active' else status end,
         current_period_end = coalesce($3, current_period_end)`,
        [invoice.periodEnd],
      );
    },
    'invoice.payment_failed': async (tx, event) => {
      const invoice = invoiceFields(event.data.object);
      if (!invoice.subscriptionId) return 'ignored';
      const workspaceId = await workspaceFor(tx, {
        workspaceId: invoice.workspaceId,
        subscriptionId: invoice.subscriptionId,
        customerId: invoice.customer,
      });
      const outcome = await applyIfNewer(
        tx,
        workspaceId,
        event,
        `status = 'past_due', past_due_since = coalesce(past_due_since, to_timestamp($2))`,
        [],
      );
      if (outcome === 'ignored') return outcome;
      // Tell the owners, in the same transaction (an event replayed later sends nothing twice).
      const owners = await tx.query<{ email: string; name: string }>(
        `select u.email, w.name from public.workspace_members m
         join auth.users u on u.id = m.user_id join public.workspaces w on w.id = m.workspace_id
         where m.workspace_id = $1 and m.role = 'owner' and u.email is not null`,
        [workspaceId],
      );
      for (const owner of owners.rows) {
        const amount =
          invoice.amountDue !== null && invoice.currency
            ? ` of ${(invoice.amountDue / 100).toFixed(2)} ${invoice.currency.toUpperCase()}`
            : '';
        await enqueueMail(tx, {
          kind: 'billing.payment_failed',
          dedupeKey: `payment_failed:${event.id}:${owner.email}`,
          to: owner.email,
          subject: `Payment failed for ${owner.name}`,
          text: [
            `The latest payment${amount} for the workspace "${owner.name}" failed.`,
            '',
            'Please update the payment method to keep full access; after the grace period the workspace becomes read-only.',
            invoice.hostedInvoiceUrl ? `Invoice: ${invoice.hostedInvoiceUrl}` : '',
            `Billing settings: ${billingUrl(options.appUrl, workspaceId)}`,
          ]
            .filter(Boolean)
            .join('\n'),
        });
      }
      return 'processed';
    },
  };
}
