// In charge of delivering outgoing webhooks: claim due messages under a lease (FOR UPDATE SKIP
// LOCKED, so several instances never send the same message at once), sign and POST each, log the
// attempt, reschedule failures on the retry schedule with jitter, and turn an endpoint off after
// repeated failure, telling the workspace's admins through the mail outbox.
import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';
import { renderNoticeMail } from '../mail/notice-mail.js';
import { enqueueMail } from '../mail/outbox.js';
import type { DestinationPolicy } from './destination.js';
import { createWebhookAgents, postWebhook, type AttemptResult, type WebhookAgents } from './post.js';
import { signedHeaders } from './signing.js';

export interface WebhookDeliveryOptions {
  pool: Pool;
  logger: Logger;
  policy: DestinationPolicy;
  /** seconds to wait before each retry; a message fails once they are used up */
  retrySchedule: number[];
  timeoutMs: number;
  /** an endpoint is turned off after this many messages in a row gave up... */
  disableAfterFailedMessages: number;
  /** ...or once it has failed without a success for this many days */
  disableAfterDays: number;
  /** delivered and failed messages (and their attempts) older than this are deleted */
  logRetentionDays?: number;
  /** the web app's address, for the link in the admins' e-mail */
  appUrl: string;
  productName?: string;
  batchSize?: number;
  leaseSeconds?: number;
}

export interface WebhookDeliveryReport {
  delivered: number;
  retried: number;
  failed: number;
}

interface ClaimedMessage {
  id: string;
  webhook_id: string;
  payload: unknown;
  attempts: number;
  manual: boolean;
  endpoint_id: string;
  url: string;
  secret: string;
  workspace_id: string;
}

/** The wait before retry number `attempt` (1-based), with up to ±20% jitter so retries spread out. */
export function retryDelaySeconds(schedule: number[], attempt: number, random = Math.random): number | null {
  const base = schedule[attempt - 1];
  if (base === undefined) return null;
  return base * (0.8 + 0.4 * random());
}

export class WebhookDelivery {
  private readonly options: Required<WebhookDeliveryOptions>;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;
  /** connections kept between attempts: a batch to one receiver reuses them */
  private readonly agents: WebhookAgents;

  constructor(options: WebhookDeliveryOptions) {
    this.options = {
      productName: 'Tenantry',
      batchSize: 20,
      leaseSeconds: 120,
      logRetentionDays: 30,
      ...options,
    };
    this.agents = createWebhookAgents(this.options.batchSize);
  }

  /** Due messages of enabled endpoints (a replay or a test event goes out even to a disabled one). */
  private async claim(): Promise<ClaimedMessage[]> {
    const result = await this.options.pool.query<ClaimedMessage>(
      `update internal.webhook_messages m
       set leased_until = now() + make_interval(secs => $2), attempts = m.attempts + 1
       from internal.webhook_endpoints e
       where e.id = m.endpoint_id and m.id in (
         select x.id from internal.webhook_messages x
         join internal.webhook_endpoints y on y.id = x.endpoint_id
         where x.status = 'pending' and x.available_at <= now()
           and (x.leased_until is null or x.leased_until < now())
           and (y.enabled or x.manual or x.event_type = 'webhook.test')
         order by x.available_at, x.id
         limit $1
         for update of x skip locked)
       returning m.id, m.webhook_id, m.payload, m.attempts, m.manual, e.id as endpoint_id, e.url, e.secret,
         e.workspace_id`,
      [this.options.batchSize, this.options.leaseSeconds],
    );
    return result.rows;
  }

  private async attempt(message: ClaimedMessage): Promise<AttemptResult> {
    const body = JSON.stringify(message.payload);
    return postWebhook(
      message.url,
      signedHeaders(message.secret, message.webhook_id, body),
      body,
      this.options.policy,
      this.options.timeoutMs,
      this.agents,
    );
  }

  /**
   * Records a batch's successes in one statement (its own transaction): the attempts, the messages
   * delivered, and their endpoints healthy again only where they were not, so successes to one
   * endpoint do not queue on that endpoint's row.
   */
  private async recordDelivered(done: { message: ClaimedMessage; result: AttemptResult }[]): Promise<void> {
    if (done.length === 0) return;
    await this.options.pool.query(
      `with done as (
         select * from unnest($1::bigint[], $2::int[], $3::int[], $4::text[], $5::boolean[], $6::uuid[])
           as d(message_id, status_code, duration_ms, response_excerpt, manual, endpoint_id)),
       attempts as (
         insert into internal.webhook_attempts (message_id, status_code, duration_ms, response_excerpt, manual)
         select message_id, status_code, duration_ms, response_excerpt, manual from done),
       delivered as (
         update internal.webhook_messages m set status = 'delivered', delivered_at = now(), leased_until = null,
           manual = false
         from done where m.id = done.message_id)
       update internal.webhook_endpoints e set consecutive_failures = 0, failing_since = null
       where e.id in (select endpoint_id from done)
         and (e.consecutive_failures <> 0 or e.failing_since is not null)`,
      [
        done.map((d) => d.message.id),
        done.map((d) => d.result.statusCode),
        done.map((d) => d.result.durationMs),
        done.map((d) => d.result.responseExcerpt),
        done.map((d) => d.message.manual),
        done.map((d) => d.message.endpoint_id),
      ],
    );
  }

  /**
   * Records a failed attempt and moves the message on (retry later, or give up) and its endpoint
   * (turned off after repeated failure); returns the outcome.
   */
  private async recordFailure(message: ClaimedMessage, result: AttemptResult): Promise<'retried' | 'failed'> {
    const client = await this.options.pool.connect();
    try {
      await client.query('begin');
      await client.query(
        `insert into internal.webhook_attempts (message_id, status_code, duration_ms, error, response_excerpt, manual)
         values ($1, $2, $3, $4, $5, $6)`,
        [
          message.id,
          result.statusCode,
          result.durationMs,
          result.error?.slice(0, 1000) ?? null,
          result.responseExcerpt,
          message.manual,
        ],
      );
      // A replay is one attempt asked for by a person: it is not retried on its own.
      const delay = message.manual ? null : retryDelaySeconds(this.options.retrySchedule, message.attempts);
      await client.query(
        `update internal.webhook_messages set leased_until = null, manual = false,
           status = case when $2::float8 is null then 'failed' else 'pending' end,
           available_at = now() + make_interval(secs => coalesce($2::float8, 0))
         where id = $1`,
        [message.id, delay],
      );
      const endpoint = await client.query<{ consecutive_failures: number; failing_days: number }>(
        `update internal.webhook_endpoints
         set failing_since = coalesce(failing_since, now()),
           consecutive_failures = consecutive_failures + case when $2 then 1 else 0 end
         where id = $1
         returning consecutive_failures,
           (extract(epoch from now() - failing_since) / 86400)::float8 as failing_days`,
        [message.endpoint_id, delay === null && !message.manual],
      );
      const facts = endpoint.rows[0];
      if (
        facts &&
        (facts.consecutive_failures >= this.options.disableAfterFailedMessages ||
          facts.failing_days >= this.options.disableAfterDays)
      ) {
        const reason =
          facts.consecutive_failures >= this.options.disableAfterFailedMessages
            ? `${facts.consecutive_failures} messages in a row could not be delivered`
            : `deliveries have failed for ${Math.floor(facts.failing_days)} days`;
        await this.disable(client, message, reason);
      }
      await client.query('commit');
      return delay === null ? 'failed' : 'retried';
    } catch (error) {
      await client.query('rollback').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** Turns the endpoint off (audit line) and e-mails the workspace's owners and admins, in one transaction. */
  private async disable(
    client: import('../db/pool.js').PoolClient,
    message: ClaimedMessage,
    reason: string,
  ): Promise<void> {
    const changed = await client.query<{ disabled: boolean }>(
      'select internal.webhook_auto_disable($1, $2) as disabled',
      [message.endpoint_id, reason],
    );
    if (!changed.rows[0]?.disabled) return;
    const admins = await client.query<{ email: string; name: string; slug: string }>(
      `select a.email, w.name, w.slug from internal.workspace_admin_recipients($1) a
       join public.workspaces w on w.id = $1`,
      [message.workspace_id],
    );
    const { productName, appUrl } = this.options;
    for (const admin of admins.rows) {
      const link = `${appUrl.replace(/\/$/, '')}/w/${admin.slug}/settings/webhooks`;
      const mail = renderNoticeMail(
        {
          layout: 'notice',
          heading: 'A webhook endpoint was turned off',
          paragraphs: [
            `${productName} stopped sending events to ${message.url} in ${admin.name}: ${reason}.`,
            'While it is off, new events are not queued for it; messages still waiting go out once it is back on.',
          ],
          action: { label: 'Check the delivery log and turn it back on', url: link },
        },
        { productName, siteUrl: appUrl },
      );
      await enqueueMail(client, {
        kind: 'webhook_endpoint_disabled',
        to: admin.email,
        subject: `A webhook endpoint of ${admin.name} was turned off`,
        ...mail,
        dedupeKey: `webhook-disabled:${message.endpoint_id}:${message.id}:${admin.email}`,
      });
    }
    this.options.logger.warn({ endpointId: message.endpoint_id, reason }, 'webhook endpoint turned off');
  }

  /** Delivers one batch. Safe to call from several processes at once. */
  async deliverBatch(): Promise<WebhookDeliveryReport> {
    const batch = await this.claim();
    const report: WebhookDeliveryReport = { delivered: 0, retried: 0, failed: 0 };
    const attempts = await Promise.all(
      batch.map(async (message) => ({ message, result: await this.attempt(message) })),
    );
    // Successes first, in one statement: an endpoint that just accepted a message is healthy
    // before its failures in the same batch are counted. Should this fail, the lease runs out and
    // the messages go again: receivers deduplicate by webhook-id, as at-least-once asks of them.
    const delivered = attempts.filter((a) => a.result.ok);
    await this.recordDelivered(delivered);
    report.delivered = delivered.length;
    // Each failure on its own: one that cannot be recorded leaves the others recorded.
    const failed = attempts.filter((a) => !a.result.ok);
    const recorded = await Promise.allSettled(
      failed.map(({ message, result }) => {
        this.options.logger.info(
          { webhookId: message.webhook_id, status: result.statusCode, error: result.error },
          'webhook attempt failed',
        );
        return this.recordFailure(message, result);
      }),
    );
    recorded.forEach((outcome, i) => {
      if (outcome.status === 'fulfilled') report[outcome.value]++;
      else {
        this.options.logger.error(
          { err: outcome.reason, webhookId: failed[i]!.message.webhook_id },
          'recording a failed webhook attempt failed',
        );
      }
    });
    return report;
  }

  /**
   * Deletes finished messages older than the retention, a bounded batch per statement so no long
   * lock is held; pending messages are never deleted. Returns how many went.
   */
  async purgeOld(): Promise<number> {
    let total = 0;
    for (;;) {
      const result = await this.options.pool.query(
        `delete from internal.webhook_messages where id in (
           select id from internal.webhook_messages
           where status <> 'pending' and created_at < now() - make_interval(days => $1)
           order by id limit 1000 for update skip locked)`,
        [this.options.logRetentionDays],
      );
      total += result.rowCount ?? 0;
      if ((result.rowCount ?? 0) < 1000) return total;
    }
  }

  /** Delivers until nothing is due. */
  async drain(): Promise<WebhookDeliveryReport> {
    const total: WebhookDeliveryReport = { delivered: 0, retried: 0, failed: 0 };
    for (;;) {
      const report = await this.deliverBatch();
      total.delivered += report.delivered;
      total.retried += report.retried;
      total.failed += report.failed;
      if (report.delivered + report.retried + report.failed === 0) return total;
    }
  }

  /** Polls every `intervalMs` until stop(). */
  start(intervalMs = 1000): void {
    let purgedAt = 0;
    const tick = () => {
      if (this.stopped) return;
      // The log is trimmed at most hourly; every instance may do it (the deletes skip locked rows).
      const purge = Date.now() - purgedAt > 3600_000;
      if (purge) purgedAt = Date.now();
      this.running = (purge ? this.purgeOld() : Promise.resolve(0))
        .then(() => this.drain())
        .catch((error: unknown) => this.options.logger.error({ err: error }, 'webhook delivery loop failed'))
        .finally(() => {
          if (!this.stopped) this.timer = setTimeout(tick, intervalMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  /** Stops polling and waits for the batch in flight (unsent messages wait for the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    this.agents.http.destroy();
    this.agents.https.destroy();
  }
}

/** Keeps the database's registration checks in step with configuration. */
export async function syncWebhookSettings(
  pool: Pool,
  settings: { allowPrivate: boolean; allowedHosts: string[]; requireHttps: boolean },
): Promise<void> {
  await pool.query(
    `update internal.webhook_settings set allow_private_destinations = $1, allowed_hosts = $2, require_https = $3`,
    [settings.allowPrivate, settings.allowedHosts.map((h) => h.toLowerCase()), settings.requireHttps],
  );
}
