// In charge of the /rest/v1 HTTP surface, independent of the server framework: it names the caller
// (apikey and bearer token) and the exposed schema it addresses, reads the body (JSON, CSV or
// raw), then runs the pipeline: parse -> plan and SQL (cached by request shape for reads) ->
// execute -> respond, answering a Reply. It is the one place errors are rendered in PostgREST's
// format. The server's listener carries it on node:http directly; a thin Hono route serves
// in-process requests.
import type { HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import type { DataApiExposure, DataApiLimits } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { Claims } from '../db/transactions.js';
import { addressGroup, clientAddress } from '../http/client-address.js';
import { whileConnected } from '../http/client-gone.js';
import { FairGate } from '../http/fair-gate.js';
import { HttpError, isHttpError } from '../http/errors.js';
import type { HeaderReader } from '../http/headers.js';
import { apiInputOf, toResponse, type ApiInput, type Reply } from '../http/reply.js';
import type { TokenSigner } from '../identity/access-tokens.js';
import { resolveCaller, type ProjectKeys } from '../identity/caller.js';
import type { Logger } from '../logger.js';
import { fromAuthError, isStatementTimeout, renderError, statementTimedOut, toHttpError } from './errors.js';
import { execute, prepare, type Session } from './execute.js';
import { bodyMediaType, parseCsv } from './media-types.js';
import { acceptsOpenApi, OPENAPI_MEDIA_TYPE, openApiDocument } from './openapi.js';
import { readSchemaAccess } from './openapi-access.js';
import { dropUnknownTimezone, exactCountOnly } from './preferences.js';
import { RawBody } from './rpc.js';
import { chooseSchema, parseApiRequest, splitPath, type ApiRequest, type RequestPolicy } from './request.js';
import { PlanCache, type Planned } from './plan-cache.js';
import { respond } from './response.js';
import type { Schema, SchemaCache } from './schema-cache.js';

export interface DataApiDeps {
  pool: Pool;
  schemaCache: SchemaCache;
  keys: ProjectKeys;
  signer: TokenSigner;
  logger: Logger;
  limits: DataApiLimits & Partial<DataApiExposure>;
  /** connections the data API may hold at once (the rest of the pool stays free for sign-ins and pages) */
  connections: number;
  trustProxy: boolean;
  /** the public base URL the OpenAPI description names as its host */
  appUrl: string;
}

/** The schema the data API exposes. */
const EXPOSED_SCHEMA = 'public';

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

function parse(
  schema: Schema,
  method: string,
  url: URL,
  headers: HeaderReader,
  policy: RequestPolicy,
): ApiRequest {
  const path = url.pathname.replace(/^\/rest\/v1/, '');
  const target = splitPath(path);
  // GET /rpc/<fn>: query parameters named like the function's arguments are arguments.
  const argumentNames =
    target.kind === 'rpc'
      ? new Set((schema.functions.get(target.name) ?? []).flatMap((f) => f.args.map((a) => a.name)))
      : new Set<string>();
  return parseApiRequest(method, path, url.searchParams, headers, argumentNames, policy);
}

/**
 * The body: JSON, CSV rows for an insert (text/csv), or the raw text (text/plain, text/xml) or
 * bytes (application/octet-stream, as bytea's hex form) for a function's one unnamed parameter.
 * An empty JSON body is undefined.
 */
function readBody(bytes: Uint8Array, headers: HeaderReader): unknown {
  const type = bodyMediaType(headers.get('content-type'));
  if (type === 'application/octet-stream')
    return new RawBody(type, `\\x${Buffer.from(bytes).toString('hex')}`);
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (type === 'text/plain' || type === 'text/xml') return new RawBody(type, text);
  if (text.trim() === '') return undefined;
  if (type === 'text/csv') return parseCsv(text);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new HttpError(400, 'Empty or invalid json', {
      code: 'PGRST102',
      details: error instanceof Error ? error.message.slice(0, 200) : null,
    });
  }
}

/**
 * What a policy or function may read of the request, as PostgREST offers it:
 * current_setting('request.headers') is a JSON object of the headers (names in lower case,
 * Cookie left out), 'request.cookies' one of the cookies, with the method and path beside them.
 * A trace header (traceparent) or a client's own header reaches SQL this way.
 */
function requestSettings(
  method: string,
  path: string,
  headers: HeaderReader,
): NonNullable<Session['request']> {
  const all: Record<string, string> = {};
  headers.forEach?.((value, name) => {
    if (name !== 'cookie') all[name] = value;
  });
  const cookies: Record<string, string> = {};
  for (const pair of (headers.get('cookie') ?? '').split(';')) {
    const at = pair.indexOf('=');
    if (at > 0) cookies[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
  }
  return { method, path, headers: JSON.stringify(all), cookies: JSON.stringify(cookies) };
}

/** The transaction's ending and settings: db-tx-end, Prefer tx and timezone, the schema, the request. */
function sessionFor(
  request: ApiRequest,
  txEnd: DataApiExposure['txEnd'],
  timezones: Set<string> | null,
  input: { method: string; path: string; headers: HeaderReader; address: string | null },
): Session {
  const session: Session = {
    request: {
      ...requestSettings(input.method, input.path, input.headers),
      // Where the request came from, as the audit log records it (never a header the client chose
      // unless TRUST_PROXY says a proxy in front sets it).
      clientAddress: input.address ?? '',
      userAgent: input.headers.get('user-agent')?.slice(0, 512) ?? '',
    },
  };
  const rollbackByDefault = txEnd.startsWith('rollback');
  const rollback = request.prefer.tx !== undefined ? request.prefer.tx === 'rollback' : rollbackByDefault;
  if (rollback) session.rollback = true;
  if (request.prefer.timezone && timezones?.has(request.prefer.timezone.toLowerCase())) {
    session.timezone = request.prefer.timezone;
  }
  if (request.schema !== 'public') session.searchPath = request.schema;
  return session;
}

/** The data API: answers a request as a Reply, whichever adapter (Hono or node:http) carries it. */
export function createDataApi(deps: DataApiDeps): { handle(input: ApiInput): Promise<Reply> } {
  const exposure: DataApiExposure = {
    schemas: deps.limits.schemas ?? ['public'],
    txEnd: deps.limits.txEnd ?? 'commit',
    planEnabled: deps.limits.planEnabled ?? false,
  };
  const policy: RequestPolicy = {
    schemas: exposure.schemas,
    txOverride: exposure.txEnd.endsWith('allow-override'),
    planEnabled: exposure.planEnabled,
  };
  // The database's time zone names, read once when a request first names a time zone.
  let timezones: Promise<Set<string>> | undefined;
  const knownTimezones = () =>
    (timezones ??= deps.pool
      .query<{ name: string }>('select lower(name) as name from pg_timezone_names')
      .then((r) => new Set(r.rows.map((row) => row.name)))
      .catch((error: unknown) => {
        timezones = undefined;
        throw error;
      }));
  const gate = new FairGate({
    capacity: deps.connections,
    perCaller: deps.limits.callerConcurrency,
    perAddress: deps.limits.addressConcurrency,
    maxWaitingPerCaller: MAX_WAITING_PER_CALLER,
    maxWaitMs: MAX_WAIT_MS,
  });
  const plans = new PlanCache();
  /** Runs fn in the caller's turn, within the share of the address it comes from. */
  const turn = <T>(claims: Claims, headers: HeaderReader, input: ApiInput, fn: () => Promise<T>) => {
    const address = clientAddress(headers, input.incoming, deps.trustProxy);
    return whileConnected(input.incoming, (gone) =>
      gate.run(callerKey(claims, address), fn, addressGroup(address), gone),
    );
  };

  const callerOf = (headers: HeaderReader) =>
    resolveCaller(headers, deps.keys, deps.signer).catch((error: unknown) => {
      throw isHttpError(error) ? fromAuthError(error) : error;
    });

  // GET /rest/v1/ (with or without the slash): the OpenAPI description of the exposed schema.
  const describe = async (input: ApiInput): Promise<Reply> => {
    let role = 'anon';
    try {
      const caller = await callerOf(input.headers);
      role = caller.claims.role;
      const headers = input.headers;
      acceptsOpenApi(headers.get('accept'));
      const profile = headers.get('accept-profile');
      if (profile && profile !== EXPOSED_SCHEMA) {
        throw new HttpError(406, `The schema must be one of the following: ${EXPOSED_SCHEMA}`, {
          code: 'PGRST106',
        });
      }
      const claims = caller.claims as Claims;
      const schema = await deps.schemaCache.get();
      const read = () => readSchemaAccess(deps.pool, claims, EXPOSED_SCHEMA);
      const access = claims.role === 'service_role' ? await read() : await turn(claims, headers, input, read);
      const document = openApiDocument({ schema, schemaName: EXPOSED_SCHEMA, access, baseUrl: deps.appUrl });
      return {
        status: 200,
        headers: { 'content-type': `${OPENAPI_MEDIA_TYPE}; charset=utf-8` },
        body: input.method === 'HEAD' ? null : JSON.stringify(document),
      };
    } catch (error) {
      return fail(error, role, pathOf(input.url), input.method);
    }
  };

  const fail = (error: unknown, role: string, path: string, method: string): Reply => {
    const code = (error as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && STALE_CACHE_STATES.has(code)) {
      void deps.schemaCache.refreshAfterMiss().catch(() => undefined);
    }
    const rendered = toHttpError(error, role);
    if (rendered) return renderError(rendered);
    if (isStatementTimeout(error)) {
      deps.logger.warn({ path, method }, 'data API statement timed out');
      return renderError(statementTimedOut());
    }
    deps.logger.error({ err: error, path, method }, 'data API request failed');
    return renderError(new HttpError(500, 'Internal server error', { code: 'PGRST500' }));
  };

  /** Parses and plans the request (and reads its body): everything before the database. */
  const plan = async (
    input: ApiInput,
    profile: string,
    schema: Schema,
    estimates: boolean,
  ): Promise<Planned> => {
    const url = new URL(input.url, 'http://data-api');
    const headers = input.headers;
    const target = splitPath(url.pathname.replace(/^\/rest\/v1/, ''));
    const known = target.kind === 'rpc' ? schema.functions.has(target.name) : schema.tables.has(target.name);
    // An unknown table or function may be one a migration just added: look again (rate-limited).
    if (!known) schema = (await deps.schemaCache.refreshAfterMiss(profile)) ?? schema;
    // Parse before reading the body, so a malformed URL is refused without reading it.
    let request = parse(schema, input.method, url, headers, policy);
    // Estimates only where they describe rows every reader sees (exactCountOnly says why).
    if (!estimates) request = { ...request, prefer: exactCountOnly(request.prefer) };
    let body: unknown;
    if (BODY_METHODS.has(input.method)) body = await readBody(await input.body(), headers);
    let tzNames: Set<string> | null = null;
    if (request.prefer.timezone) {
      tzNames = await knownTimezones();
      if (!tzNames.has(request.prefer.timezone.toLowerCase())) {
        request = { ...request, prefer: dropUnknownTimezone(request.prefer) };
      }
    }
    try {
      return { request, prepared: prepare(schema, request, body, deps.limits), tzNames };
    } catch (error) {
      // Likewise for a column or relationship: reload once and plan again.
      if (!isHttpError(error) || !SCHEMA_MISSES.has(error.code)) throw error;
      const fresh = await deps.schemaCache.refreshAfterMiss(profile);
      if (!fresh) throw error;
      request = { ...parse(fresh, input.method, url, headers, policy), prefer: request.prefer };
      return { request, prepared: prepare(fresh, request, body, deps.limits), tzNames };
    }
  };

  const handle = async (input: ApiInput): Promise<Reply> => {
    if ((input.method === 'GET' || input.method === 'HEAD') && /^\/rest\/v1\/?(\?|$)/.test(input.url)) {
      return describe(input);
    }
    let role = 'anon';
    try {
      const caller = await callerOf(input.headers);
      role = caller.claims.role;
      const headers = input.headers;
      const profile = chooseSchema(input.method, headers, policy.schemas);
      const schema = await deps.schemaCache.get(profile);
      const estimates = role === 'service_role' || estimatesStayInTenant(input.url, schema);
      const inputKey = PlanCache.key(input);
      // The plan differs by whether estimates are allowed, so the role class is part of the key.
      const key = inputKey === null ? null : estimates ? `${inputKey}\nestimates` : inputKey;
      let planned = key === null ? undefined : plans.get(schema, key);
      if (!planned) {
        planned = await plan(input, profile, schema, estimates);
        if (key !== null) plans.set(schema, key, planned);
      }
      const { request, prepared, tzNames } = planned;
      const claims = caller.claims as Claims;
      const session = sessionFor(request, exposure.txEnd, tzNames, {
        method: input.method,
        // PostgREST sits behind the gateway's /rest/v1 and sees the path without it.
        path: pathOf(input.url).replace(/^\/rest\/v1(?=\/)/, ''),
        headers,
        address: clientAddress(headers, input.incoming, deps.trustProxy),
      });
      const run = () => execute(deps.pool, claims, prepared, session);
      // The service role is the operator's own back end: trusted, and not queued behind users.
      const result = claims.role === 'service_role' ? await run() : await turn(claims, headers, input, run);
      return respond(request, prepared.shape, result);
    } catch (error) {
      return fail(error, role, pathOf(input.url), input.method);
    }
  };
  return { handle };
}

/**
 * True when planner estimates for this read describe only rows any reader of the table sees: a
 * plain table without row-level security, read without embedding others (whose statistics an
 * estimate with inner joins would also draw on). Anything else is counted exactly for users.
 */
function estimatesStayInTenant(url: string, schema: Schema): boolean {
  const path = pathOf(url).replace(/^\/rest\/v1\/?/, '');
  const table = /^[^/]+$/.test(path) ? schema.tables.get(safeDecode(path)) : undefined;
  if (!table || table.rowSecurity) return false;
  const select = new URL(url, 'http://data-api').searchParams.get('select') ?? '';
  return !select.includes('(');
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

/** The Hono route for /rest/v1 (in-process requests; the server's own listener serves /rest/v1 on node:http). */
export function dataApiRoutes(api: ReturnType<typeof createDataApi>): Hono<{ Bindings: HttpBindings }> {
  const app = new Hono<{ Bindings: HttpBindings }>();
  app.all('/*', async (c) => toResponse(await api.handle(apiInputOf(c.req.raw, c.env?.incoming))));
  return app;
}
