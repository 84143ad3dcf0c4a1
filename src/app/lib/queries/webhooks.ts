// In charge of reading a workspace's outgoing webhook endpoints and each one's newest deliveries
// for the webhooks settings page, through the database's functions (owners and admins only).
import { asUser } from '@/app/lib/db';
import type { SignedIn } from '@/app/lib/session';

/** The platform's events an endpoint can subscribe to, as the database knows them (migration 0100). */
export const PLATFORM_EVENTS = [
  'project.created',
  'project.updated',
  'project.deleted',
  'member.added',
  'member.removed',
  'member.role_changed',
  'invitation.created',
  'invitation.accepted',
  'invitation.revoked',
  'billing.subscription_updated',
] as const;

export interface WebhookAttempt {
  attempted_at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  response_excerpt: string | null;
  manual: boolean;
}

export interface WebhookDeliveryRow {
  id: number;
  webhook_id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  created_at: string;
  next_attempt_at: string | null;
  log: WebhookAttempt[];
}

export interface WebhookEndpointRow {
  id: string;
  url: string;
  description: string;
  event_types: string[];
  enabled: boolean;
  disabled_reason: string | null;
  consecutive_failures: number;
  created_at: string;
  deliveries: WebhookDeliveryRow[];
}

export const DELIVERIES_SHOWN = 10;

export async function listWebhooks(user: SignedIn, workspaceId: string): Promise<WebhookEndpointRow[]> {
  return asUser(user, async (tx) => {
    const endpoints = await tx.query<{ e: Omit<WebhookEndpointRow, 'deliveries'> }>(
      'select public.list_webhook_endpoints($1) as e',
      [workspaceId],
    );
    const rows: WebhookEndpointRow[] = [];
    for (const { e } of endpoints.rows) {
      const deliveries = await tx.query<{ d: WebhookDeliveryRow }>(
        'select public.list_webhook_deliveries($1, $2) as d',
        [e.id, DELIVERIES_SHOWN],
      );
      rows.push({ ...e, deliveries: deliveries.rows.map((r) => r.d) });
    }
    return rows;
  });
}
