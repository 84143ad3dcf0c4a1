'use server';
// Server actions for billing: send an owner to Stripe Checkout for a plan, or to the customer
// portal. Only owners may (checked in the database); refusals come back to the billing page.
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { flash } from '@/app/lib/flash';
import { currentUser } from '@/app/lib/session';
import { isHttpError } from '@/server/http/errors';
import { getRuntime } from '@/server/runtime';

const input = z.object({
  slug: z.string().regex(/^[a-z0-9-]{1,48}$/),
  workspace_id: z.uuid(),
  plan: z.string().optional(),
});

async function toStripe(form: FormData, kind: 'checkout' | 'portal'): Promise<never> {
  const parsed = input.safeParse(Object.fromEntries(form));
  if (!parsed.success) redirect('/workspaces');
  const back = `/w/${parsed.data.slug}/billing`;
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(back)}`);
  const billing = getRuntime().billing;
  if (!billing) {
    await flash('error', 'Payments are not set up on this server yet');
    redirect(back);
  }
  let url: string;
  try {
    url =
      kind === 'checkout'
        ? await billing.startCheckout(user.claims, parsed.data.workspace_id, parsed.data.plan ?? '')
        : await billing.openPortal(user.claims, parsed.data.workspace_id);
  } catch (error) {
    const message = isHttpError(error)
      ? error.message
      : 'The payment provider could not be reached; try again';
    await flash('error', message);
    redirect(back);
  }
  redirect(url);
}

export async function startCheckoutAction(form: FormData) {
  await toStripe(form, 'checkout');
}

export async function openPortalAction(form: FormData) {
  await toStripe(form, 'portal');
}
