// Test support: a real Tenantry platform server on an ephemeral port, backed by its own copy of
// the migrated template database, configured exactly as production mode (all secrets explicit).
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import pg from 'pg';
import { inject } from 'vitest';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import ws from 'ws';
import { loadConfig, type Config } from '../../src/server/config.js';
import { createPool, poolOptionsFrom, type Pool } from '../../src/server/db/pool.js';
import { createHttpServer, type HttpServer } from '../../src/server/http/server.js';
import { createLogger } from '../../src/server/logger.js';
import { createPlatform } from '../../src/server/platform.js';
import { REALTIME_WEBSOCKET_PATH } from '../../src/server/realtime/service.js';
import type { IdentityService } from '../../src/server/identity/service.js';

export interface TestServer {
  url: string;
  config: Config;
  pool: Pool;
  /** the process's HTTP server as production builds it: register upgrades, read connection counts */
  http: HttpServer;
  /** the realtime service the server runs (its sockets) */
  realtime: ReturnType<typeof createPlatform>['realtime'];
  /** the identity service the server runs (its password-hash queue, for instance) */
  identity: IdentityService;
  /** a supabase-js client with the project's public key and no persisted session */
  client(): SupabaseClient;
  /** a supabase-js client with the service-role key */
  adminClient(): SupabaseClient;
  /** a supabase-js client that sends the given bearer token instead of a session */
  clientWithToken(token: string): SupabaseClient;
  close(): Promise<void>;
}

export function randomKey(prefix = ''): string {
  return prefix + randomBytes(24).toString('base64url');
}

/** Creates an isolated database cloned from the migrated template. */
export async function createTestDatabase(): Promise<string> {
  const adminUrl = inject('pgAdminUrl');
  const name = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${inject('templateDatabase')}`);
  } finally {
    await admin.end();
  }
  return adminUrl.replace(/\/postgres$/, `/${name}`);
}

/** Starts a server; pass DATABASE_URL (and the same secrets) to put a second instance on one database. */
export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const databaseUrl = env.DATABASE_URL ?? (await createTestDatabase());
  const config = await loadConfig({
    DATABASE_URL: databaseUrl,
    JWT_SECRET: randomKey(),
    PROJECT_API_KEY: randomKey('anon_'),
    SERVICE_ROLE_KEY: randomKey('service_'),
    PAYMENT_WEBHOOK_SECRET: randomKey('whsec_'),
    CRON_SECRET: randomKey(),
    AUTH_AUTOCONFIRM: 'true',
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DB_POOL_MAX: '10',
    ...env,
  });
  const pool = createPool(databaseUrl, poolOptionsFrom(config.database));
  const logger = createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  const { listener, identity, realtime } = createPlatform({ config, pool, logger });
  // The same server production runs: its connection caps, timeouts and upgrade router.
  const http = createHttpServer({ limits: config.http, listener, logger });
  http.upgrades.register(REALTIME_WEBSOCKET_PATH, realtime.upgrade);
  const server: Server = http.server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const options = {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
    realtime: { transport: ws as unknown as typeof WebSocket },
  };
  return {
    url,
    config,
    pool,
    http,
    identity,
    client: () => createClient(url, config.projectApiKey, options),
    adminClient: () => createClient(url, config.serviceRoleKey, options),
    clientWithToken: (token) =>
      createClient(url, config.projectApiKey, {
        ...options,
        global: { headers: { Authorization: `Bearer ${token}` } },
      }),
    realtime,
    close: async () => {
      await realtime.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}

/** Raw HTTP helper: JSON in, status + parsed body + headers out. */
export async function call(
  server: TestServer,
  method: string,
  path: string,
  options: {
    body?: unknown;
    rawBody?: string;
    headers?: Record<string, string>;
    apikey?: string | null;
  } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apikey !== null) headers.apikey = options.apikey ?? server.config.projectApiKey;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  const response = await fetch(server.url + path, { method, headers, body });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined; // not JSON: callers look at `text`
  }
  return { status: response.status, body: json as Record<string, unknown>, text, headers: response.headers };
}
