// In charge of the process: configuration -> database (embedded or DATABASE_URL) -> migrations
// -> the platform app and Next.js behind one node:http server -> graceful stop.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { syncEntitlements } from './billing/entitlements.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { createPool } from './db/pool.js';
import { createLogger } from './logger.js';
import { createPlatform, isPlatformPath } from './platform.js';
import { FREQUENCIES, SCHEDULES } from './digest/frequency.js';
import { runDigest } from './digest/run.js';
import { MailDelivery } from './mail/delivery.js';
import { registerRuntime } from './runtime.js';
import { Scheduler } from './scheduler.js';
import { syncAppSettings } from './settings.js';
import { loadWebHandler } from './web.js';

async function main(): Promise<void> {
  let config: Config;
  try {
    config = await loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`tenantry: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = createLogger(config.logLevel);
  const database = await openDatabase(config);
  const pool = createPool(database.url);
  const migrations = await migrate(pool);
  logger.info({ applied: migrations.applied, alreadyApplied: migrations.skipped }, 'migrations up to date');
  await syncAppSettings(pool, { appUrl: config.appUrl });
  await syncEntitlements(pool, {
    freeSeats: config.freePlanSeats,
    freeProjects: config.freePlanProjects,
    plans: config.billingPlans,
    graceDays: config.billingGraceDays,
  });

  const { app, digest, schemaCache } = createPlatform({ config, pool, logger });
  registerRuntime({ config, pool });
  const platformListener = getRequestListener(app.fetch);
  const web = await loadWebHandler(logger);

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const pathname = (req.url ?? '/').split('?')[0] ?? '/';
    if (isPlatformPath(pathname) || !web) {
      void platformListener(req, res);
    } else {
      void web(req, res);
    }
  });
  await new Promise<void>((resolve) => server.listen(config.port, config.host, resolve));

  // Mail goes out only where SMTP is configured; otherwise it waits in the outbox (dev mailbox).
  const mail = config.smtpUrl
    ? new MailDelivery({ pool, logger, smtp: config.smtpUrl, from: config.mailFrom })
    : undefined;
  mail?.start();
  const scheduler = config.scheduler
    ? new Scheduler({
        pool,
        logger,
        timezone: config.schedulerTimezone,
        jobs: FREQUENCIES.map((frequency) => ({
          name: `digest:${frequency}`,
          cron: SCHEDULES[frequency],
          run: () => runDigest(digest, frequency),
        })),
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
      ? `  dev secrets:     ${config.dataDir}/dev-secrets.json (service-role key, webhook and cron secrets)`
      : undefined,
    `  mail:            ${config.smtpUrl ? 'SMTP delivery on' : 'kept in the outbox (no SMTP_URL)'}`,
    `  digests:         ${config.scheduler ? `scheduled in-process (${config.schedulerTimezone})` : 'scheduler off (SCHEDULER=off)'}`,
    '',
  ].filter((line) => line !== undefined);
  process.stdout.write(banner.join('\n') + '\n');

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // Stop taking work, let in-flight requests and jobs finish, then release the database.
    await scheduler?.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await mail?.stop();
    schemaCache.close();
    await pool.end();
    await database.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void stop('SIGINT'));
  process.once('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`tenantry: failed to start: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
