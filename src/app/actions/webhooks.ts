'use server';
// Server actions for a workspace's outgoing webhooks: register an endpoint and rotate its secret
// (the secret comes back in the form's state, shown once), and send a test event, turn an endpoint
// off or on, replay a delivery and delete an endpoint (each a toast). All run as the signed-in
// person; the database decides who may (owners and admins, decision 0094).
import { revalidatePath } from 'next/cache';
import { redirect } from 'next/navigation';
import { z } from 'zod';
import { FieldRefusal, fieldErrorsOf, runAction } from '@/app/lib/actions';
import { asUser, refusalMessage } from '@/app/lib/db';
import { idField, slugField } from '@/app/lib/fields';
import { submittedValues, type FormState } from '@/app/lib/form-state';
import { currentUser } from '@/app/lib/session';
import { getRuntime } from '@/server/runtime';
import { checkResolvedUrl, RefusedDestination } from '@/server/webhooks/destination';

export interface SecretState extends FormState {
  /** the endpoint's signing secret, shown once right after creation or rotation */
  secret?: { url: string; value: string };
}

const back = (slug: string) => `/w/${slug}/settings/webhooks`;

const createSchema = z.object({
  slug: slugField,
  workspace_id: idField,
  url: z
    .string({ error: 'Give the URL that receives events' })
    .trim()
    .min(1, 'Give the URL that receives events')
    .max(2000, 'Use at most 2000 characters')
    .refine((v) => /^https?:\/\/[^\s]+$/i.test(v), 'Use an http:// or https:// address'),
  description: z.string().trim().max(500, 'Use at most 500 characters').default(''),
});

export async function createWebhookAction(_state: SecretState, form: FormData): Promise<SecretState> {
  const slug = String(form.get('slug') ?? '');
  const user = await currentUser();
  if (!user) redirect(`/sign-in?next=${encodeURIComponent(back(slug))}`);
  const events = form.getAll('event_types').map(String);
  // The boxes ticked are kept (comma-joined) so a refused form comes back as it was sent.
  const values = { ...submittedValues(form), event_types: events.join(',') };
  const input = createSchema.safeParse(Object.fromEntries(form));
  if (!input.success || events.length === 0) {
    const fieldErrors = input.success ? {} : fieldErrorsOf(input.error);
    if (events.length === 0) fieldErrors.event_types = 'Choose at least one event';
    return { fieldErrors, values };
  }
  const i = input.data;
  try {
    // A name is resolved before registering, so one pointing inside the network is refused here
    // rather than at its first delivery.
    const { webhooks } = getRuntime().config;
    await checkResolvedUrl(i.url, {
      allowPrivate: webhooks.allowPrivateDestinations,
      allowedHosts: webhooks.allowedHosts,
    }).catch((error: unknown) => {
      if (error instanceof RefusedDestination)
        throw new FieldRefusal('url', `Webhooks cannot be sent there: ${error.message}`);
      if (error instanceof TypeError) throw new FieldRefusal('url', 'Use an http:// or https:// address');
      throw error;
    });
    const created = await asUser(user, async (tx) => {
      try {
        const r = await tx.query<{ e: { url: string; secret: string } }>(
          'select public.create_webhook_endpoint($1, $2, $3, $4) as e',
          [i.workspace_id, i.url, events, i.description],
        );
        return r.rows[0]!.e;
      } catch (error) {
        // The database's refusal of a destination is about the URL: shown under it.
        if ((error as { code?: string }).code === '22023' && /webhook|address|URL|host/i.test(String(error)))
          throw new FieldRefusal('url', (error as Error).message);
        throw error;
      }
    });
    revalidatePath(back(i.slug));
    return { secret: { url: created.url, value: created.secret } };
  } catch (error) {
    if (error instanceof FieldRefusal) return { fieldErrors: { [error.field]: error.message }, values };
    return { error: refusalMessage(error), values };
  }
}

export async function rotateWebhookSecretAction(_state: SecretState, form: FormData): Promise<SecretState> {
  const input = z.object({ slug: slugField, endpoint_id: idField }).safeParse(Object.fromEntries(form));
  const user = await currentUser();
  if (!user || !input.success) redirect('/sign-in');
  try {
    const rotated = await asUser(user, async (tx) => {
      const r = await tx.query<{ e: { url: string; secret: string } }>(
        'select public.rotate_webhook_secret($1) as e',
        [input.data.endpoint_id],
      );
      return r.rows[0]!.e;
    });
    return { secret: { url: rotated.url, value: rotated.secret } };
  } catch (error) {
    return { error: refusalMessage(error) };
  }
}

const endpointSchema = z.object({ slug: slugField, endpoint_id: idField });

export async function sendTestWebhookAction(form: FormData) {
  const slug = String(form.get('slug') ?? '');
  await runAction(back(slug), form, endpointSchema, async (tx, i) => {
    await tx.query('select public.send_test_webhook($1)', [i.endpoint_id]);
    return { notice: 'Test event queued: it shows in the log once sent' };
  });
}

export async function setWebhookEnabledAction(form: FormData) {
  const slug = String(form.get('slug') ?? '');
  const schema = endpointSchema.extend({ enabled: z.enum(['true', 'false'], { error: 'Try again' }) });
  await runAction(back(slug), form, schema, async (tx, i) => {
    await tx.query('select public.update_webhook_endpoint($1, enabled => $2)', [
      i.endpoint_id,
      i.enabled === 'true',
    ]);
    return { notice: i.enabled === 'true' ? 'Endpoint turned on' : 'Endpoint turned off' };
  });
}

export async function updateWebhookEventsAction(form: FormData) {
  const slug = String(form.get('slug') ?? '');
  await runAction(back(slug), form, endpointSchema, async (tx, i) => {
    const events = form.getAll('event_types').map(String);
    await tx.query('select public.update_webhook_endpoint($1, event_types => $2)', [i.endpoint_id, events]);
    return { notice: 'Events saved' };
  });
}

export async function replayWebhookAction(form: FormData) {
  const slug = String(form.get('slug') ?? '');
  const schema = z.object({ slug: slugField, delivery_id: z.string().regex(/^\d{1,18}$/, 'Try again') });
  await runAction(back(slug), form, schema, async (tx, i) => {
    await tx.query('select public.replay_webhook_delivery($1)', [i.delivery_id]);
    return { notice: 'Delivery queued again, with the same webhook-id' };
  });
}

export async function deleteWebhookAction(form: FormData) {
  const slug = String(form.get('slug') ?? '');
  await runAction(back(slug), form, endpointSchema, async (tx, i) => {
    await tx.query('select public.delete_webhook_endpoint($1)', [i.endpoint_id]);
    return { notice: 'Endpoint deleted' };
  });
}
