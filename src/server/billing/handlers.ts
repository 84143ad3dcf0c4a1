// In charge of what each payment event does to a workspace's billing state: one handler per
// event type (adding a type is adding an entry). Handlers run inside the event-log transaction,
// find the workspace by the Stripe customer it is linked to (our own metadata only for a
// workspace with no customer yet, so events arriving before the checkout that links them still
// apply), and never let an older event overwrite newer state: every change is guarded by the
// event's creation time against the last one applied to that subscription.
import type { Statement, Tx } from '../db/transactions.js';
import { enqueueMail } from '../mail/outbox.js';
import { RefusedEvent, type FinalStatement, type HandlerOutcome, type HandlerRegistry } from './events.js';
import { billingUrl } from './links.js';
import { paymentFailedMail } from './payment-failed-mail.js';
import { planForPrice, type Plan } from './plans.js';
import type { VerifiedEvent } from './verify.js';

export interface BillingHandlerOptions {
  plans: readonly Plan[];
  appUrl: string;
  /** the product's name in e-mails (PRODUCT_NAME) */
  productName?: string;
}

type StripeObject = Record<string, unknown>;

const str = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const num = (value: unknown): number | null => (typeof value === 'number' ? value : null);
const obj = (value: unknown): StripeObject =>
  value && typeof value === 'object' ? (value as StripeObject) : {};
const idOf = (value: unknown): string | null => str(value) ?? str(obj(value).id);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface WorkspaceHints {
  workspaceId: string | null;
  subscriptionId: string | null;
  customerId: string | null;
}

/** The lookup's answer: a workspace, or why the event is refused, or neither (not linked yet). */
function workspaceFrom(row: { workspace_id: string | null; refusal: string | null } | undefined): string {
  if (row?.refusal) throw new RefusedEvent(row.refusal);
  // Unknown for now: fail so the provider retries once the checkout has linked it.
  if (!row?.workspace_id) throw new Error('No workspace is linked to this payment event yet');
  return row.workspace_id;
}

/** Our metadata's workspace id, when it is one (anything else names no workspace). */
const workspaceHint = (hints: WorkspaceHints) =>
  hints.workspaceId && UUID.test(hints.workspaceId) ? hints.workspaceId : null;

/**
 * The workspace an event concerns (internal.billing_workspace_for, migration 0035). Once a
 * workspace is linked to a Stripe customer, only events naming that customer touch it: the
 * customer (then the subscription) decides, whatever the metadata says. Our metadata only finds a
 * workspace that has no customer yet (an event that overtakes the checkout linking it), and never
 * relinks one whose customer is another.
 */
async function workspaceFor(tx: Tx, hints: WorkspaceHints): Promise<string> {
  const found = await tx.query<{ workspace_id: string | null; refusal: string | null }>({
    name: 'billing.workspace_for',
    text: 'select workspace_id, refusal from internal.billing_workspace_for($1, $2, $3)',
    values: [workspaceHint(hints), hints.subscriptionId, hints.customerId],
  });
  return workspaceFrom(found.rows[0]);
}

/**
 * The statement that finds the workspace (as workspaceFor) and applies `changes` to its
 * subscription, unless this event is older than the last one applied (order safety): one prepared
 * statement, one round trip. `changes` sees the event's creation time as $2 and `values` from $3
 * on. As a final statement (sent with the commit) it also refuses by raising
 * (internal.billing_require_target) and marks an older event 'ignored' itself.
 */
function applyStatement(
  hints: WorkspaceHints,
  event: VerifiedEvent,
  changes: string,
  values: unknown[],
  final: boolean,
): Statement {
  const last = values.length + 2;
  const [subscription, customer, eventId] = [last + 1, last + 2, last + 3];
  const ignored = final
    ? `, ignored as (
        update internal.billing_events set status = 'ignored'
        where id = $${eventId} and not exists (select 1 from applied)
        returning 1
      )`
    : '';
  const workspace = final
    ? 'internal.billing_require_target(t.workspace_id, t.refusal) as workspace_id, null::text as refusal'
    : 't.workspace_id, t.refusal';
  return {
    text: `with target as (select * from internal.billing_workspace_for($1, $${subscription}, $${customer})),
      applied as (
        update public.subscriptions s set ${changes}, last_event_created = $2, updated_at = now()
        from target t
        where s.workspace_id = t.workspace_id and t.refusal is null
          and (s.last_event_created is null or s.last_event_created <= $2)
        returning 1
      )${ignored}
      select ${workspace}, (select count(*) from applied)::int as applied from target t`,
    values: [
      workspaceHint(hints),
      event.created,
      ...values,
      hints.subscriptionId,
      hints.customerId,
      ...(final ? [event.id] : []),
    ],
  };
}

const appliedOutcome = (rows: Record<string, unknown>[]): HandlerOutcome =>
  Number(rows[0]?.applied ?? 0) > 0 ? 'processed' : 'ignored';

/** applyStatement run now, for a handler with more to do after it; `kind` names the statement. */
async function applyIfNewer(
  tx: Tx,
  kind: string,
  hints: WorkspaceHints,
  event: VerifiedEvent,
  changes: string,
  values: unknown[],
): Promise<{ outcome: HandlerOutcome; workspaceId: string }> {
  const result = await tx.query<{ workspace_id: string | null; refusal: string | null; applied: number }>({
    name: `billing.apply.${kind}`,
    ...applyStatement(hints, event, changes, values, false),
  });
  return { outcome: appliedOutcome(result.rows), workspaceId: workspaceFrom(result.rows[0]) };
}

/** applyStatement as the handler's last word, sent with the commit. */
const applyWithCommit = (
  hints: WorkspaceHints,
  event: VerifiedEvent,
  changes: string,
  values: unknown[],
): FinalStatement => ({
  statement: applyStatement(hints, event, changes, values, true),
  outcome: appliedOutcome,
});

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
    const hints = { workspaceId: s.workspaceId, subscriptionId: s.id, customerId: s.customer };
    if (deleted) {
      return applyWithCommit(
        hints,
        event,
        `plan = 'free', status = 'canceled', cancel_at_period_end = false, past_due_since = null,
         current_period_end = $3, stripe_subscription_id = coalesce($4, stripe_subscription_id),
         stripe_customer_id = coalesce($5, stripe_customer_id)`,
        [s.periodEnd, s.id, s.customer],
      );
    }
    return applyWithCommit(
      hints,
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
      return applyWithCommit(
        {
          workspaceId: invoice.workspaceId,
          subscriptionId: invoice.subscriptionId,
          customerId: invoice.customer,
        },
        event,
        `past_due_since = null, status = case when status in ('past_due', 'unpaid', 'incomplete') then 'active' else status end,
         current_period_end = coalesce($3, current_period_end)`,
        [invoice.periodEnd],
      );
    },
    'invoice.payment_failed': async (tx, event) => {
      const invoice = invoiceFields(event.data.object);
      if (!invoice.subscriptionId) return 'ignored';
      const { outcome, workspaceId } = await applyIfNewer(
        tx,
        'invoice_failed',
        {
          workspaceId: invoice.workspaceId,
          subscriptionId: invoice.subscriptionId,
          customerId: invoice.customer,
        },
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
        const mail = paymentFailedMail({
          productName: options.productName ?? 'Tenantry',
          appUrl: options.appUrl,
          workspace: owner.name,
          amount,
          invoiceUrl: invoice.hostedInvoiceUrl,
          billingUrl: billingUrl(options.appUrl, workspaceId),
        });
        await enqueueMail(tx, {
          kind: 'billing.payment_failed',
          dedupeKey: `payment_failed:${event.id}:${owner.email}`,
          to: owner.email,
          ...mail,
        });
      }
      return 'processed';
    },
  };
}
