'use client';
// The webhooks page's controls: registering an endpoint (URL, description, events) and rotating its
// secret, both showing the secret once with a copy button; and the small forms that send a test
// event, turn an endpoint off or on, replay a delivery and delete an endpoint (asked first).
import { RefreshCw, Send, Trash2, Webhook } from 'lucide-react';
import { useActionState } from 'react';
import {
  createWebhookAction,
  deleteWebhookAction,
  replayWebhookAction,
  rotateWebhookSecretAction,
  sendTestWebhookAction,
  setWebhookEnabledAction,
  updateWebhookEventsAction,
  type SecretState,
} from '@/app/actions/webhooks';
import { ConfirmAction } from '@/app/components/confirm-action';
import { SecretShownOnce } from '@/app/components/secret-shown-once';
import { Button } from '@/app/components/ui/button';
import { Field, FormError } from '@/app/components/ui/field';
import { SubmitButton } from '@/app/components/ui/submit-button';

const initial: SecretState = {};

function ShownSecret({ secret, slug }: { secret: { url: string; value: string }; slug: string }) {
  return (
    <SecretShownOnce
      secret={secret.value}
      label="Signing secret"
      copyLabel="Copy secret"
      savedHref={`/w/${slug}/settings/webhooks`}
      marker="data-new-webhook-secret"
    >
      Copy the signing secret for {secret.url} now: it is shown only this once.
    </SecretShownOnce>
  );
}

export function CreateWebhookForm({
  slug,
  workspaceId,
  events,
}: {
  slug: string;
  workspaceId: string;
  events: readonly string[];
}) {
  const [state, action] = useActionState(createWebhookAction, initial);
  if (state.secret) return <ShownSecret secret={state.secret} slug={slug} />;
  const chosen = state.values ? (state.values.event_types ?? '').split(',') : ['project.created'];
  const eventsError = state.fieldErrors?.event_types;
  return (
    <form action={action} className="grid grid-cols-1 gap-4" noValidate aria-label="Add an endpoint">
      <FormError>{state.error}</FormError>
      <input type="hidden" name="slug" value={slug} />
      <input type="hidden" name="workspace_id" value={workspaceId} />
      <Field
        label="Endpoint URL"
        name="url"
        type="url"
        placeholder="https://example.com/hooks/tenantry"
        autoComplete="off"
        required
        defaultValue={state.values?.url ?? ''}
        error={state.fieldErrors?.url}
      />
      <Field
        label="Description"
        name="description"
        placeholder="What receives these events"
        autoComplete="off"
        maxLength={500}
        defaultValue={state.values?.description ?? ''}
        error={state.fieldErrors?.description}
      />
      <fieldset
        className="grid gap-1"
        aria-describedby={eventsError ? 'event-types-error' : undefined}
        aria-invalid={eventsError ? true : undefined}
      >
        <legend className="mb-1 text-sm font-medium">Events</legend>
        <EventCheckboxes events={events} chosen={chosen} />
        {eventsError ? (
          <p id="event-types-error" className="text-sm text-destructive">
            {eventsError}
          </p>
        ) : null}
      </fieldset>
      <div>
        <SubmitButton pendingText="Adding…">
          <Webhook aria-hidden="true" />
          Add endpoint
        </SubmitButton>
      </div>
    </form>
  );
}

export function RotateSecret({ slug, endpointId, url }: { slug: string; endpointId: string; url: string }) {
  const [state, action] = useActionState(rotateWebhookSecretAction, initial);
  if (state.secret) return <ShownSecret secret={state.secret} slug={slug} />;
  return (
    <form action={action} className="inline-flex flex-col gap-1">
      <FormError>{state.error}</FormError>
      <input type="hidden" name="slug" value={slug} />
      <input type="hidden" name="endpoint_id" value={endpointId} />
      <SubmitButton
        variant="outline"
        size="sm"
        pendingText="Rotating…"
        aria-label={`Rotate secret of ${url}`}
      >
        <RefreshCw aria-hidden="true" />
        Rotate secret
      </SubmitButton>
    </form>
  );
}

export function EndpointActions({
  slug,
  endpointId,
  url,
  enabled,
}: {
  slug: string;
  endpointId: string;
  url: string;
  enabled: boolean;
}) {
  return (
    <div className="flex flex-wrap items-start gap-2">
      <form action={sendTestWebhookAction}>
        <input type="hidden" name="slug" value={slug} />
        <input type="hidden" name="endpoint_id" value={endpointId} />
        <SubmitButton
          variant="outline"
          size="sm"
          pendingText="Sending…"
          aria-label={`Send test event to ${url}`}
        >
          <Send aria-hidden="true" />
          Send test event
        </SubmitButton>
      </form>
      <form action={setWebhookEnabledAction}>
        <input type="hidden" name="slug" value={slug} />
        <input type="hidden" name="endpoint_id" value={endpointId} />
        <input type="hidden" name="enabled" value={enabled ? 'false' : 'true'} />
        <SubmitButton
          variant="outline"
          size="sm"
          pendingText={enabled ? 'Turning off…' : 'Turning on…'}
          aria-label={`${enabled ? 'Turn off' : 'Turn on'} ${url}`}
        >
          {enabled ? 'Turn off' : 'Turn on'}
        </SubmitButton>
      </form>
      <RotateSecret slug={slug} endpointId={endpointId} url={url} />
      <ConfirmAction
        trigger={
          <Button variant="ghost" size="sm" aria-label={`Delete the endpoint ${url}`}>
            <Trash2 aria-hidden="true" />
            Delete
          </Button>
        }
        title="Delete this endpoint?"
        description={`${url} stops receiving events at once, and its delivery log is deleted.`}
        confirmLabel="Delete endpoint"
        pendingLabel="Deleting…"
        action={deleteWebhookAction}
        fields={{ slug, endpoint_id: endpointId }}
      />
    </div>
  );
}

export function ReplayDelivery({
  slug,
  deliveryId,
  event,
}: {
  slug: string;
  deliveryId: number;
  event: string;
}) {
  return (
    <form action={replayWebhookAction}>
      <input type="hidden" name="slug" value={slug} />
      <input type="hidden" name="delivery_id" value={String(deliveryId)} />
      <SubmitButton
        variant="ghost"
        size="sm"
        pendingText="Queuing…"
        aria-label={`Replay the ${event} delivery`}
      >
        Replay
      </SubmitButton>
    </form>
  );
}

export function EditEvents({
  slug,
  endpointId,
  url,
  events,
  chosen,
}: {
  slug: string;
  endpointId: string;
  url: string;
  events: readonly string[];
  chosen: string[];
}) {
  // Application events (names the team's triggers send) are kept as they are; only the platform's
  // boxes are offered here.
  const custom = chosen.filter((e) => !events.includes(e));
  return (
    <details className="rounded-md border px-3 py-2">
      <summary className="min-h-8 cursor-pointer text-sm font-medium">Change events</summary>
      <form
        action={updateWebhookEventsAction}
        className="grid gap-3 pt-2"
        aria-label={`Events sent to ${url}`}
      >
        <input type="hidden" name="slug" value={slug} />
        <input type="hidden" name="endpoint_id" value={endpointId} />
        {custom.map((e) => (
          <input key={e} type="hidden" name="event_types" value={e} />
        ))}
        <EventCheckboxes events={events} chosen={chosen} />
        <div>
          <SubmitButton variant="outline" size="sm" pendingText="Saving…">
            Save events
          </SubmitButton>
        </div>
      </form>
    </details>
  );
}

/** The catalogue's events as checkboxes named event_types, those in `chosen` ticked. */
function EventCheckboxes({ events, chosen }: { events: readonly string[]; chosen: readonly string[] }) {
  return (
    <div className="grid grid-cols-1 gap-x-4 sm:grid-cols-2 lg:grid-cols-3">
      {events.map((event) => (
        <label key={event} className="flex min-h-11 cursor-pointer items-center gap-3 text-sm">
          <input
            type="checkbox"
            name="event_types"
            value={event}
            defaultChecked={chosen.includes(event)}
            className="size-4 accent-[var(--primary)]"
          />
          <code>{event}</code>
        </label>
      ))}
    </div>
  );
}
