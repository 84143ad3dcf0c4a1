// Where billing links from outside the app land (Stripe's return URLs, payment e-mails): they name
// the workspace by id, which never changes, and each member is sent on to the billing page under
// the workspace's current slug. For anyone else the workspace does not exist.
import { notFound, redirect } from 'next/navigation';
import { asUser } from '@/app/lib/db';
import { requireUser } from '@/app/lib/session';
import { billingPath } from '@/server/billing/links';

export const dynamic = 'force-dynamic';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export default async function BillingLinkPage({
  params,
  searchParams,
}: {
  params: Promise<{ id: string }>;
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const { id } = await params;
  if (!UUID.test(id)) notFound();
  const { checkout } = await searchParams;
  const result = checkout === 'success' || checkout === 'cancelled' ? checkout : undefined;
  const user = await requireUser(billingPath(id, result));
  const slug = await asUser(user, async (tx) => {
    // Row-level security shows only the user's own workspaces.
    const r = await tx.query<{ slug: string }>('select slug from public.workspaces where id = $1', [id]);
    return r.rows[0]?.slug;
  });
  if (!slug) notFound();
  redirect(`/w/${slug}/billing${result ? `?checkout=${result}` : ''}`);
}
