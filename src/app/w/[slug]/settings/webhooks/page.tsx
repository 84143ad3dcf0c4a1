// A workspace's outgoing webhooks, for its owners and admins: add an endpoint (its signing secret
// shown once), see each endpoint's events and state (turned off automatically, and why), its newest
// deliveries with their attempts, and send a test event, replay a delivery, rotate the secret, turn
// it off or on, or delete it. Others are told who manages webhooks (decision 0094).
import { PageHeader } from '@/app/components/page-header';
import { RelativeTime } from '@/app/components/relative-time';
import { Badge } from '@/app/components/ui/badge';
import { Card, CardContent, CardDescription, CardHeader, CardTitle } from '@/app/components/ui/card';
import { requireWorkspace } from '@/app/lib/db';
import { listWebhooks, PLATFORM_EVENTS, type WebhookDeliveryRow } from '@/app/lib/queries/webhooks';
import { workspaceTitle } from '@/app/lib/titles';
import { count } from '@/server/text/counts';
import {
  CreateWebhookForm,
  EditEvents,
  EndpointActions,
  ReplayDelivery,
} from '@/app/w/[slug]/settings/webhooks/webhook-forms';

export const dynamic = 'force-dynamic';

type Params = { params: Promise<{ slug: string }> };

export const generateMetadata = ({ params }: Params) => workspaceTitle(params, 'Webhooks');

const STATUS_BADGE = {
  delivered: 'success',
  pending: 'warning',
  failed: 'danger',
} as const;

function lastAttempt(d: WebhookDeliveryRow): string {
  const a = d.log[0];
  if (!a) return 'not tried yet';
  const outcome = a.status_code !== null ? `HTTP ${a.status_code}` : (a.error ?? 'no answer');
  return `${outcome} in ${a.duration_ms} ms${a.manual ? ' (replay)' : ''}`;
}

export default async function WebhooksPage({ params }: Params) {
  const { user, workspace } = await requireWorkspace(params, '/settings/webhooks');
  const manage = workspace.role === 'admin' || workspace.role === 'owner';
  const endpoints = manage ? await listWebhooks(user, workspace.id) : [];
  return (
    <>
      <PageHeader
        title="Webhooks"
        description={`Send ${workspace.name}'s events to your own systems, signed so they can check it was us.`}
      />
      {manage ? (
        <div className="grid grid-cols-1 gap-6">
          <Card aria-labelledby="new-endpoint">
            <CardHeader>
              <CardTitle id="new-endpoint">Add an endpoint</CardTitle>
              <CardDescription>
                Events are POSTed as JSON with Standard Webhooks headers (<code>webhook-id</code>,{' '}
                <code>webhook-timestamp</code>, <code>webhook-signature</code>). Verify them with the secret
                shown after adding.
              </CardDescription>
            </CardHeader>
            <CardContent>
              <CreateWebhookForm slug={workspace.slug} workspaceId={workspace.id} events={PLATFORM_EVENTS} />
            </CardContent>
          </Card>
          <section aria-labelledby="endpoints" className="grid gap-4">
            <h2 id="endpoints" className="text-lg font-semibold">
              Endpoints{' '}
              <span className="text-sm font-normal text-muted-foreground">
                ({count(endpoints.length, 'endpoint')})
              </span>
            </h2>
            {endpoints.length === 0 ? (
              <p role="status" className="text-sm text-muted-foreground">
                No endpoints yet.
              </p>
            ) : null}
            {endpoints.map((e) => (
              <Card key={e.id} data-webhook-endpoint={e.url} aria-label={`Endpoint ${e.url}`}>
                <CardHeader>
                  <CardTitle className="flex flex-wrap items-center gap-2 break-all">
                    <span>{e.url}</span>
                    {e.enabled ? <Badge variant="success">on</Badge> : <Badge variant="danger">off</Badge>}
                  </CardTitle>
                  <CardDescription>
                    {e.description ? `${e.description} · ` : ''}added <RelativeTime date={e.created_at} />
                  </CardDescription>
                  {e.disabled_reason ? (
                    <p role="alert" className="text-sm text-destructive">
                      Turned off automatically: {e.disabled_reason}. Fix the receiver, then turn it back on.
                    </p>
                  ) : null}
                </CardHeader>
                <CardContent className="grid gap-4">
                  <p className="flex flex-wrap gap-1.5 text-sm">
                    <span className="sr-only">Events:</span>
                    {e.event_types.map((t) => (
                      <Badge key={t}>{t}</Badge>
                    ))}
                  </p>
                  <EndpointActions slug={workspace.slug} endpointId={e.id} url={e.url} enabled={e.enabled} />
                  <EditEvents
                    slug={workspace.slug}
                    endpointId={e.id}
                    url={e.url}
                    events={PLATFORM_EVENTS}
                    chosen={e.event_types}
                  />
                  <div>
                    <h3 className="mb-2 text-sm font-medium">Recent deliveries</h3>
                    {e.deliveries.length === 0 ? (
                      <p className="text-sm text-muted-foreground">Nothing sent yet.</p>
                    ) : (
                      <ul aria-label={`Deliveries to ${e.url}`} className="divide-y rounded-md border">
                        {e.deliveries.map((d) => (
                          <li
                            key={d.id}
                            data-webhook-delivery={d.event_type}
                            className="flex flex-wrap items-center gap-x-3 gap-y-1 px-3 py-2 text-sm"
                          >
                            <Badge variant={STATUS_BADGE[d.status]}>{d.status}</Badge>
                            <code className="min-w-0 flex-1 truncate font-medium">{d.event_type}</code>
                            {d.status !== 'pending' ? (
                              <ReplayDelivery slug={workspace.slug} deliveryId={d.id} event={d.event_type} />
                            ) : null}
                            {/* The facts take their own line, so a phone's width is not split four ways. */}
                            <span className="min-w-0 basis-full text-muted-foreground">
                              {count(d.attempts, 'attempt')} · {lastAttempt(d)} ·{' '}
                              <RelativeTime date={d.created_at} />
                              <span className="block truncate font-mono text-xs">{d.webhook_id}</span>
                            </span>
                          </li>
                        ))}
                      </ul>
                    )}
                  </div>
                </CardContent>
              </Card>
            ))}
          </section>
        </div>
      ) : (
        <Card>
          <CardContent className="pt-6">
            <p className="text-sm text-muted-foreground">Only admins and owners manage webhooks.</p>
          </CardContent>
        </Card>
      )}
    </>
  );
}
