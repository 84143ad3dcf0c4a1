// In charge of GET /metrics, Prometheus' text format for the operator: requests and their latency
// per route family and status, the database pool, the mail outbox, payment webhooks and scheduled
// runs, realtime's sockets, channels, messages, refusals and changes lag, plus the process' own figures. Off unless METRICS_TOKEN is set; then only a scraper that
// sends it as a bearer token reads it (figures about traffic are not for the public).
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';
import type { RealtimeFigures } from '../realtime/service.js';

export const METRICS_PATH = '/metrics';

/** The part of the product a path belongs to: few, fixed labels, never the path itself. */
export function routeFamily(pathname: string): string {
  if (pathname.startsWith('/auth/v1/')) return 'auth';
  if (pathname === '/rest/v1' || pathname.startsWith('/rest/v1/')) return 'rest';
  if (pathname.startsWith('/storage/v1/')) return 'storage';
  if (pathname.startsWith('/realtime/v1/')) return 'realtime';
  if (pathname.startsWith('/api/billing/')) return 'billing';
  if (pathname.startsWith('/api/notifications/')) return 'notifications';
  if (pathname.startsWith('/api/health')) return 'health';
  if (pathname.startsWith('/api/')) return 'api';
  if (pathname.startsWith('/_next/')) return 'assets';
  return 'pages';
}

export interface Metrics {
  /** counts and times one request from its arrival until its response is finished */
  observe(req: IncomingMessage, res: ServerResponse): void;
  /** answers GET /metrics (404 when off, 401 without the token) */
  serve(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

export function createMetrics(options: {
  pool: Pool;
  token: string | undefined;
  logger: Logger;
  /** this instance's realtime figures, read at each scrape */
  realtime?: () => RealtimeFigures;
}): Metrics {
  const { pool, token, logger, realtime } = options;
  const registry = new Registry();
  registry.setDefaultLabels({ service: 'tenantry' });
  collectDefaultMetrics({ register: registry, prefix: 'tenantry_' });

  const requests = new Counter({
    name: 'tenantry_http_requests_total',
    help: 'HTTP requests answered, by route family, method and status',
    labelNames: ['family', 'method', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'tenantry_http_request_duration_seconds',
    help: 'Time from a request arriving to its response finishing, by route family and status class',
    labelNames: ['family', 'status_class'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  new Gauge({
    name: 'tenantry_db_pool_connections',
    help: 'Database pool connections: open, idle, and requests waiting for one',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'open' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
    },
  });

  if (realtime) registerRealtime(registry, realtime);

  // What the database knows (outbox, webhooks, scheduled runs), read once per scrape.
  const outboxUnsent = new Gauge({
    name: 'tenantry_mail_outbox_unsent',
    help: 'E-mails neither sent nor given up on',
    registers: [registry],
  });
  const outboxOldest = new Gauge({
    name: 'tenantry_mail_outbox_oldest_unsent_seconds',
    help: 'Age of the oldest unsent e-mail',
    registers: [registry],
  });
  const webhookLag = new Gauge({
    name: 'tenantry_payment_webhook_lag_seconds',
    help: 'Seconds between the provider creating the latest payment event and its arrival here',
    registers: [registry],
  });
  const webhookFailed = new Gauge({
    name: 'tenantry_payment_webhook_failed_events',
    help: 'Payment events whose handling failed and waits for a retry or a replay',
    registers: [registry],
  });
  const schedulerRuns = new Gauge({
    name: 'tenantry_scheduler_runs',
    help: 'Scheduled runs recorded, by job and outcome (all instances together)',
    labelNames: ['job', 'outcome'] as const,
    registers: [registry],
  });
  const schedulerLast = new Gauge({
    name: 'tenantry_scheduler_last_run_timestamp_seconds',
    help: 'When each job last finished a run (unix seconds)',
    labelNames: ['job'] as const,
    registers: [registry],
  });

  const readDatabaseFigures = async () => {
    const [outbox, webhooks, runs] = await Promise.all([
      pool.query<{ unsent: number; oldest: number }>(
        `select count(*)::int as unsent,
                coalesce(extract(epoch from now() - min(created_at))::int, 0) as oldest
         from internal.outbox where sent_at is null and failed_at is null`,
      ),
      pool.query<{ lag: number | null; failed: number }>(
        `select (select extract(epoch from e.received_at - to_timestamp(e.created))::float8
                 from internal.billing_events e order by e.received_at desc limit 1) as lag,
                (select count(*)::int from internal.billing_events where status = 'failed') as failed`,
      ),
      pool.query<{ job: string; finished: number; failed: number; running: number; last: number | null }>(
        `select job, count(*) filter (where finished_at is not null and error is null)::int as finished,
                count(*) filter (where error is not null)::int as failed,
                count(*) filter (where finished_at is null and error is null)::int as running,
                extract(epoch from max(finished_at))::float8 as last
         from internal.scheduler_runs group by job`,
      ),
    ]);
    outboxUnsent.set(outbox.rows[0]?.unsent ?? 0);
    outboxOldest.set(outbox.rows[0]?.oldest ?? 0);
    webhookLag.set(Math.max(0, webhooks.rows[0]?.lag ?? 0));
    webhookFailed.set(webhooks.rows[0]?.failed ?? 0);
    schedulerRuns.reset();
    for (const run of runs.rows) {
      schedulerRuns.set({ job: run.job, outcome: 'finished' }, run.finished);
      schedulerRuns.set({ job: run.job, outcome: 'failed' }, run.failed);
      schedulerRuns.set({ job: run.job, outcome: 'running' }, run.running);
      if (run.last !== null) schedulerLast.set({ job: run.job }, run.last);
    }
  };

  const expected = token ? digest(`Bearer ${token}`) : null;
  const authorised = (req: IncomingMessage) => {
    if (!expected) return false;
    // Equal-length digests, compared in constant time: the token's length does not leak either.
    return timingSafeEqual(digest(req.headers.authorization ?? ''), expected);
  };

  return {
    observe(req, res) {
      const started = process.hrtime.bigint();
      const family = routeFamily((req.url ?? '/').split('?')[0] ?? '/');
      res.once('finish', () => {
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        const status = String(res.statusCode);
        requests.inc({ family, method: req.method ?? 'GET', status });
        latency.observe({ family, status_class: `${status[0]}xx` }, seconds);
      });
    },
    async serve(req, res) {
      if (!expected) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found\n');
        return;
      }
      if (!authorised(req)) {
        res
          .writeHead(401, { 'content-type': 'text/plain; charset=utf-8', 'www-authenticate': 'Bearer' })
          .end('Send METRICS_TOKEN as a bearer token\n');
        return;
      }
      try {
        await readDatabaseFigures();
      } catch (error) {
        // The process' own figures still help when the database does not answer.
        logger.warn({ err: error }, 'metrics: database figures unavailable');
      }
      res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' });
      res.end(await registry.metrics());
    },
  };
}

/** Realtime's figures in this instance (a socket lives on one instance: sum them across instances). */
function registerRealtime(registry: Registry, figures: () => RealtimeFigures): void {
  const gauge = (name: string, help: string, read: (f: RealtimeFigures) => number | null) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const value = read(figures());
        if (value !== null) this.set(value);
      },
    });
  gauge('tenantry_realtime_sockets', 'Open realtime sockets', (f) => f.sockets);
  gauge('tenantry_realtime_channels', 'Joined realtime channels', (f) => f.channels);
  gauge(
    'tenantry_realtime_pending_broadcasts',
    "Broadcasts waiting for their workspace's turn to be delivered",
    (f) => f.pendingBroadcasts,
  );
  gauge(
    'tenantry_realtime_changes_lag_seconds',
    'Seconds from a database change being captured to its delivery, for the latest delivered',
    (f) => f.changesLagSeconds,
  );
  // Counters that realtime keeps itself: shown as they stand at the scrape.
  new Counter({
    name: 'tenantry_realtime_messages_in_total',
    help: 'Realtime frames received from clients (heartbeats aside)',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(figures().messagesIn);
    },
  });
  new Counter({
    name: 'tenantry_realtime_messages_out_total',
    help: 'Realtime frames sent to clients',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(figures().messagesOut);
    },
  });
  new Counter({
    name: 'tenantry_realtime_refusals_total',
    help: 'Realtime refusals (joins, pushes, sockets) and channels shut down, by reason',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [reason, count] of figures().refusals) this.inc({ reason }, count);
    },
  });
}
