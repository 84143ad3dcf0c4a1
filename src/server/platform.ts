// In charge of assembling the platform app (Hono): the identity service at /auth/v1, health
// and readiness at /api/health, the data API, billing webhook and digest trigger, and the
// node:http listener that serves them (the data API on node:http directly, decision 0029).
// Everything here is created from explicit dependencies so tests can build one per database.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener, type HttpBindings } from '@hono/node-server';
import { Hono, type MiddlewareHandler } from 'hono';
import { cors } from 'hono/cors';
import type { RequestIdVariables } from 'hono/request-id';
import { createBillingHandlers } from './billing/handlers.js';
import { billingRoutes, createWebhookHandler } from './billing/routes.js';
import type { Config } from './config.js';
import { mailHealth } from './mail/health.js';
import { createDataApi, dataApiRoutes } from './data-api/routes.js';
import { SchemaCache, schemaWatchFor } from './data-api/schema-cache.js';
import { turnDigestOff } from './digest/preferences.js';
import { digestRoutes } from './digest/routes.js';
import { runDigest } from './digest/run.js';
import { createUnsubscribeKey } from './digest/unsubscribe-token.js';
import type { Pool } from './db/pool.js';
import { API_SECURITY_HEADERS, CORS_EXPOSED_HEADERS, requestIdFrom, serveOnNode } from './http/node-api.js';
import { databaseUnavailable, isDatabaseUnavailable } from './http/unavailable.js';
import { createTokenSigner } from './identity/access-tokens.js';
import { IDENTITY_BASE_PATH, identityRoutes } from './identity/routes.js';
import { authorizationServerMetadata } from './identity/oauth-server/metadata.js';
import { createTokenHandler } from './identity/token-endpoint.js';
import { IdentityService, identityDepsFrom } from './identity/service.js';
import { createWorkspaceKeyVerifier } from './identity/workspace-keys.js';
import type { Logger } from './logger.js';
import { openApiDocument } from './openapi.js';
import { createStorage } from './storage/service.js';
import { isStorageRequest } from './storage/routes.js';
import { createRealtime, isRealtimeRequest } from './realtime/service.js';

export interface PlatformDeps {
  config: Config;
  pool: Pool;
  logger: Logger;
}

/** Path prefixes served by the platform app; everything else belongs to Next.js. */
export const PLATFORM_PREFIXES = [
  '/api/openapi.json',
  '/auth/v1',
  '/rest/v1',
  '/api/health',
  '/api/billing',
  '/api/notifications',
  '/storage/v1',
  '/realtime/v1',
];

export function isPlatformPath(pathname: string): boolean {
  return PLATFORM_PREFIXES.some((p) => pathname === p || pathname.startsWith(`${p}/`));
}

async function databaseReady(pool: Pool): Promise<boolean> {
  const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), 2000).unref());
  const probe = pool.query('select 1').then(
    () => true,
    () => false,
  );
  return Promise.race([probe, timeout]);
}

/**
 * The data API may hold all but a quarter of the pool (at least two connections) at once, so
 * sign-ins, token refreshes and pages always find a connection however busy the data API is.
 */
export function dataApiConnections(poolMax: number): number {
  return Math.max(1, poolMax - Math.max(2, Math.floor(poolMax / 4)));
}

/** The payment webhook's path, with or without a query string. */
function isWebhookRequest(req: IncomingMessage): boolean {
  const url = req.url ?? '';
  return url === '/api/billing/webhook' || url.startsWith('/api/billing/webhook?');
}

/** Token grants (POST /auth/v1/token, with its query string), answered on node:http directly. */
function isTokenRequest(req: IncomingMessage): boolean {
  const url = req.url ?? '';
  return req.method === 'POST' && (url === '/auth/v1/token' || url.startsWith('/auth/v1/token?'));
}

/** Requests the data API answers on node:http directly: /rest/v1, except CORS preflights. */
function isDataApiRequest(req: IncomingMessage): boolean {
  const url = req.url ?? '';
  return (
    url.startsWith('/rest/v1') &&
    (url.length === 8 || url[8] === '/' || url[8] === '?') &&
    req.method !== 'OPTIONS'
  );
}

export function createPlatform({ config, pool, logger }: PlatformDeps) {
  const signer = createTokenSigner({
    secret: config.jwtSecret,
    issuer: config.jwtIssuer,
    ttlSeconds: config.accessTokenTtlSeconds,
    keys: config.jwtKeys,
    acceptSecret: config.jwtSecretAccepted,
    verifiedCacheBytes: config.identity.verifiedTokenCacheBytes,
  });
  const identity = new IdentityService(identityDepsFrom(config, pool, signer));
  const keys = { projectApiKey: config.projectApiKey, serviceRoleKey: config.serviceRoleKey };
  // Workspace API keys act on data (rest, storage, realtime), never on accounts (/auth/v1).
  const dataKeys = {
    ...keys,
    workspaceKeys: createWorkspaceKeyVerifier(pool, { requestsPerMinute: config.apiKeyRequestsPerMinute }),
  };

  const app = new Hono<{ Bindings: HttpBindings; Variables: RequestIdVariables }>();

  // The request id and the CORS headers of actual (non-preflight) requests are set on the
  // handler's response after it is made. Hono's own middlewares set them before, which creates an
  // empty response early and makes Hono rebuild the handler's response around it (a web stream
  // per response): measurable CPU on every data-API and identity request (decision 0018).
  app.use(async (c, next) => {
    const id = requestIdFrom(c.req.header('x-request-id'));
    c.set('requestId', id);
    await next();
    c.res.headers.set('X-Request-Id', id);
  });
  app.use(async (c, next) => {
    const started = performance.now();
    await next();
    logger.info(
      {
        requestId: c.get('requestId'),
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 10) / 10,
      },
      'request',
    );
  });
  // API responses are JSON for programs: no framing, no sniffing, no referrer, HSTS for HTTPS.
  app.use(async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(API_SECURITY_HEADERS)) c.res.headers.set(name, value);
  });
  // Browser apps on other origins use supabase-js against these two APIs, as with Supabase.
  const apiCors = cors({
    origin: '*',
    allowHeaders: [
      'apikey',
      'authorization',
      'content-type',
      'x-client-info',
      'x-supabase-api-version',
      'prefer',
      'range',
      'range-unit',
      'accept-profile',
      'content-profile',
    ],
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    exposeHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 86400,
  });
  const exposed = CORS_EXPOSED_HEADERS.join(',');
  const apiCorsAfter: MiddlewareHandler = async (c, next) => {
    if (c.req.method === 'OPTIONS') return apiCors(c, next);
    await next();
    c.res.headers.set('Access-Control-Allow-Origin', '*');
    c.res.headers.set('Access-Control-Expose-Headers', exposed);
  };
  app.use('/auth/v1/*', apiCorsAfter);
  app.use('/rest/v1/*', apiCorsAfter);

  app.get('/api/health', (c) => c.json({ status: 'ok' }));
  const openApi = openApiDocument({ appUrl: config.appUrl, authUrl: config.authUrl });
  app.get('/api/openapi.json', (c) => c.json(openApi));
  let mailWarnedAt = 0;
  app.get('/api/health/ready', async (c) => {
    const ok = await databaseReady(pool);
    if (!ok) return c.json({ status: 'unavailable', database: 'unreachable' }, 503);
    // Mail is reported, not a reason to take the instance out of service: every instance would
    // fail together, and the app does more than send mail.
    const mail = await mailHealth(pool, config.mailDelivery ?? 'outbox').catch(() => null);
    // Probes come every few seconds: one warning per five minutes is enough to be seen.
    if (mail?.degraded && Date.now() - mailWarnedAt > 300_000) {
      mailWarnedAt = Date.now();
      logger.warn(
        {
          unsent: mail.unsent,
          oldestUnsentSeconds: mail.oldest_unsent_seconds,
          failedLastDay: mail.failed_last_day,
          lastError: mail.last_error,
        },
        'mail delivery is backed up or failing: check SMTP_URL and the SMTP server',
      );
    }
    // Payments not set up is the operator's to know (here and in the start-up log), not customers'.
    const billing =
      config.stripeSecretKey && config.billingPlans.length > 0 ? 'configured' : 'not configured';
    return c.json({ status: 'ready', database: 'ok', billing, ...(mail ? { mail } : {}) }, 200);
  });

  const tokenHandler = createTokenHandler({
    service: identity,
    keys,
    signer,
    trustProxy: config.trustProxy,
    logger,
  });
  app.route(
    IDENTITY_BASE_PATH,
    identityRoutes({
      tokenHandler,
      service: identity,
      keys,
      signer,
      trustProxy: config.trustProxy,
      autoconfirm: config.autoconfirm,
      disableSignup: config.disableSignup,
      anonymousSignIns: config.anonymousSignIns,
      logger,
    }),
  );

  // RFC 8414 discovery at the server's root too (bare, and with the issuer's path appended), where
  // OAuth clients look first; the same document as /auth/v1/.well-known/oauth-authorization-server.
  if (config.oauthServer.enabled) {
    const metadata = () => authorizationServerMetadata(signer.issuer, config.authUrl);
    const cache = { 'cache-control': 'public, max-age=600' };
    app.get('/.well-known/oauth-authorization-server', (c) => c.json(metadata(), 200, cache));
    app.get(`/.well-known/oauth-authorization-server${IDENTITY_BASE_PATH}`, (c) =>
      c.json(metadata(), 200, cache),
    );
  }

  const schemaCache = new SchemaCache(pool, logger, config.dataApi.schemas, schemaWatchFor(config.database));
  const dataApi = createDataApi({
    pool,
    schemaCache,
    keys: dataKeys,
    signer,
    logger,
    limits: config.dataApi,
    connections: dataApiConnections(config.database.poolMax),
    trustProxy: config.trustProxy,
    appUrl: config.appUrl,
  });
  app.route('/rest/v1', dataApiRoutes(dataApi));

  const webhook = createWebhookHandler({
    pool,
    logger,
    webhookSecret: config.paymentWebhookSecret,
    handlers: createBillingHandlers({
      plans: config.billingPlans,
      appUrl: config.appUrl,
      productName: config.authEmail.productName,
    }),
  });
  app.route('/api/billing', billingRoutes(webhook));

  const unsubscribeKey = createUnsubscribeKey(config.jwtSecret);
  const digest = { pool, appUrl: config.appUrl, unsubscribeKey, productName: config.authEmail.productName };
  app.route(
    '/api/notifications',
    digestRoutes({
      cronSecret: config.cronSecret,
      logger,
      unsubscribeKey,
      runDigest: (frequency) => runDigest(digest, frequency),
      unsubscribe: (userId) => turnDigestOff(pool, userId),
    }),
  );

  app.notFound((c) => c.json({ error: 'not_found', message: 'No such endpoint' }, 404));
  app.onError((error, c) => {
    if (isDatabaseUnavailable(error)) {
      const unavailable = databaseUnavailable(error);
      return c.json({ error: unavailable.code, message: unavailable.message }, 503, unavailable.headers);
    }
    logger.error({ err: error, path: c.req.path }, 'request failed');
    return c.json({ error: 'internal_error', message: 'Internal server error' }, 500);
  });

  // The server's listener: the data API, token grants and the payment webhook on node:http
  // directly (no web Request/Response objects per request: the hottest paths), everything else
  // through Hono.
  const honoListener = getRequestListener(app.fetch);
  const dataApiListener = serveOnNode(dataApi.handle, logger);
  const webhookListener = serveOnNode(webhook, logger, { cors: false });
  const tokenListener = serveOnNode(tokenHandler, logger);
  // File storage streams request and response bodies, so it is served on node:http only.
  const storage = createStorage(config, pool, logger, dataKeys, signer);
  // Realtime's socket comes through the server's upgrade router (main.ts), its HTTP API here.
  const realtime = createRealtime({ config, pool, logger, keys: dataKeys, signer });
  const listener = (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (isDataApiRequest(req)) return dataApiListener(req, res);
    if (isStorageRequest(req.url ?? '')) return storage.listener(req, res);
    if (isRealtimeRequest(req.url ?? '')) return realtime.listener(req, res);
    if (isTokenRequest(req)) return tokenListener(req, res);
    if (isWebhookRequest(req)) return webhookListener(req, res);
    return honoListener(req, res) as Promise<void>;
  };

  return { app, listener, identity, signer, schemaCache, digest, storage, realtime };
}
