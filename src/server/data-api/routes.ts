// In charge of the /rest/v1 HTTP surface: a thin Hono adapter. It names the caller (apikey and
// bearer token), then runs the pipeline: parse -> plan and SQL -> execute -> respond. It is the
// one place errors are rendered in PostgREST's format.
import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import type { DataApiLimits } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { Claims } from '../db/transactions.js';
import { readJsonBody } from '../http/body.js';
import { clientAddress } from '../http/client-address.js';
import { FairGate } from '../http/fair-gate.js';
import { HttpError, isHttpError } from '../http/errors.js';
import type { TokenSigner } from '../identity/access-tokens.js';
import { resolveCaller, type ProjectKeys } from '../identity/caller.js';
import type { Logger } from '../logger.js';
import { fromAuthError, isStatementTimeout, renderError, statementTimedOut, toHttpError } from './errors.js';
import { execute, prepare, type Prepared } from './execute.js';
import { parseApiRequest, splitPath, type ApiRequest } from './request.js';
import { respond } from './response.js';
import type { Schema, SchemaCache } from './schema-cache.js';

export interface DataApiDeps {
  pool: Pool;
  schemaCache: SchemaCache;
  keys: ProjectKeys;
  signer: TokenSigner;
  logger: Logger;
  limits: DataApiLimits;
  /** connections the data API may hold at once (the rest of the pool stays free for sign-ins and pages) */
  connections: number;
  trustProxy: boolean;
}

/** How long a request may wait for its caller's turn at the database. */
const MAX_WAIT_MS = 10_000;
/** Requests one caller may have waiting for a turn; more are refused with 429. */
const MAX_WAITING_PER_CALLER = 64;

const BODY_METHODS = new Set(['POST', 'PATCH']);
/** Planning errors that a schema cache older than the latest migration could cause. */
const SCHEMA_MISSES = new Set(['PGRST200', 'PGRST202', 'PGRST204', 'PGRST205', '42703']);
/** Database errors saying the cache is ahead of the catalog (something was dropped or renamed). */
const STALE_CACHE_STATES = new Set(['42P01', '42703', '42883']);

/** Whose turn a request waits for: the signed-in user, or the address of an anonymous caller. */
function callerKey(claims: Claims, address: string | null): string {
  return typeof claims.sub === 'string' ? `user:${claims.sub}` : `address:${address ?? 'unknown'}`;
}

function parse(schema: Schema, method: string, url: URL, headers: Headers): ApiRequest {
  const path = url.pathname.replace(/^\/rest\/v1/, '');
  const target = splitPath(path);
  // GET /rpc/<fn>: query parameters named like the function's arguments are arguments.
  const argumentNames =
    target.kind === 'rpc'
      ? new Set((schema.functions.get(target.name) ?? []).flatMap((f) => f.args.map((a) => a.name)))
      : new Set<string>();
  return parseApiRequest(method, path, url.searchParams, headers, argumentNames);
}

export function dataApiRoutes(deps: DataApiDeps): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  const gate = new FairGate({
    capacity: deps.connections,
    perCaller: deps.limits.callerConcurrency,
    maxWaitingPerCaller: MAX_WAITING_PER_CALLER,
    maxWaitMs: MAX_WAIT_MS,
  });

  app.all('/*', async (c) => {
    let role = 'anon';
    try {
      const caller = await resolveCaller(c.req.raw.headers, deps.keys, deps.signer).catch(
        (error: unknown) => {
          throw isHttpError(error) ? fromAuthError(error) : error;
        },
      );
      role = caller.claims.role;
      const url = new URL(c.req.url);
      const headers = c.req.raw.headers;
      let schema = await deps.schemaCache.get();
      const target = splitPath(url.pathname.replace(/^\/rest\/v1/, ''));
      const known =
        target.kind === 'rpc' ? schema.functions.has(target.name) : schema.tables.has(target.name);
      // An unknown table or function may be one a migration just added: look again (rate-limited).
      if (!known) schema = (await deps.schemaCache.refreshAfterMiss()) ?? schema;
      // Parse before reading the body, so a malformed URL is refused without reading it.
      let request = parse(schema, c.req.method, url, headers);
      let body: unknown;
      if (BODY_METHODS.has(c.req.method)) {
        body = await readJsonBody(c.req.raw).catch((error: unknown) => {
          if (isHttpError(error) && error.code === 'bad_json') {
            throw new HttpError(400, 'Empty or invalid json', { code: 'PGRST102', details: error.message });
          }
          throw error;
        });
      }
      let prepared: Prepared;
      try {
        prepared = prepare(schema, request, body, deps.limits);
      } catch (error) {
        // Likewise for a column or relationship: reload once and plan again.
        if (!isHttpError(error) || !SCHEMA_MISSES.has(error.code)) throw error;
        const fresh = await deps.schemaCache.refreshAfterMiss();
        if (!fresh) throw error;
        schema = fresh;
        request = parse(schema, c.req.method, url, headers);
        prepared = prepare(schema, request, body, deps.limits);
      }
      const claims = caller.claims as Claims;
      const run = () => execute(deps.pool, claims, prepared);
      // The service role is the operator's own back end: trusted, and not queued behind users.
      const result =
        claims.role === 'service_role'
          ? await run()
          : await gate.run(callerKey(claims, clientAddress(headers, c.env?.incoming, deps.trustProxy)), run);
      return respond(request, prepared.shape, result);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code === 'string' && STALE_CACHE_STATES.has(code)) {
        void deps.schemaCache.refreshAfterMiss().catch(() => undefined);
      }
      const rendered = toHttpError(error, role);
      if (rendered) return renderError(rendered);
      if (isStatementTimeout(error)) {
        deps.logger.warn({ path: c.req.path, method: c.req.method }, 'data API statement timed out');
        return renderError(statementTimedOut());
      }
      deps.logger.error({ err: error, path: c.req.path, method: c.req.method }, 'data API request failed');
      return renderError(new HttpError(500, 'Internal server error', { code: 'PGRST500' }));
    }
  });
  return app;
}
