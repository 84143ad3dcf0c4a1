// In charge of running a data-API request, and the only module that touches the database.
// prepare() is pure: it plans the request against a schema, within the request limits, and
// writes its one SQL statement; execute() runs that statement as the caller in one transaction
// (read-only for GET/HEAD), sent with the caller's settings in one round trip (with the EXPLAIN of
// a planned count, or only the EXPLAIN for a plan request), ended by a commit or, when asked, a
// rollback, and hands the single result row to response.ts.
import { statementTimeoutOf, type Pool } from '../db/pool.js';
import { runStatementsAsCaller, type Claims, type Statement } from '../db/transactions.js';
import { HttpError } from '../http/errors.js';
import {
  findTable,
  planInsert,
  planRead,
  planUpdate,
  requireFilters,
  resultTable,
  type ReadPlan,
} from './plan.js';
import { capEmbeds, capRead, checkFilterInputs, responseTooLarge, type RequestLimits } from './limits.js';
import type { SelectItem } from './grammar.js';
import type { ApiRequest } from './request.js';
import { expectsOne, notOneRow, type ResultRow, type ResultShape } from './response.js';
import type { Schema } from './schema-cache.js';
import type { PlanOption } from './media-types.js';
import { planCall, RawBody } from './rpc.js';
import {
  countEstimateQuery,
  deleteQuery,
  insertQuery,
  readQuery,
  scalarCallQuery,
  scalarSetCallQuery,
  updateQuery,
  type Query,
} from './sql.js';

export interface Prepared {
  query: Query;
  readOnly: boolean;
  shape: ResultShape;
  /** Accept: application/vnd.pgrst.object+json: any other row count undoes the transaction */
  expectOne?: boolean;
  /** the body limit the statement measures against, when it was given one */
  maxBodyBytes?: number;
  /** Prefer: count=planned|estimated: the statement whose plan estimates the total */
  estimate?: { query: Query; mode: 'planned' | 'estimated'; maxRows: number };
  /** Prefer: handling=strict, max-affected=N: more changed rows than this undoes the request */
  maxAffected?: number;
  /** a write that answers no body (return=minimal): nothing about its result can refuse it */
  bodyless?: boolean;
  /** Accept: application/vnd.pgrst.plan: answer the statement's EXPLAIN instead of running it */
  explain?: { format: 'text' | 'json'; options: PlanOption[] };
}

/** How the transaction runs besides the caller's identity: Prefer tx, timezone and the schema. */
export interface Session {
  rollback?: boolean;
  /** a time zone the database knows (checked before) */
  timezone?: string;
  /** the exposed schema, first on the search path, for functions that name tables unqualified */
  searchPath?: string;
  /** request.method, request.path, request.headers and request.cookies, as PostgREST sets them */
  request?: {
    method: string;
    path: string;
    headers: string;
    cookies: string;
    /** the client's address and user agent for the audit log (tenantry.client_address, tenantry.user_agent) */
    clientAddress?: string;
    userAgent?: string;
  };
}

/** No bounds: what the SQL writer's own tests plan with. The service always passes its limits. */
const UNBOUNDED: RequestLimits = {
  maxRows: Number.POSITIVE_INFINITY,
  maxResponseBytes: Number.POSITIVE_INFINITY,
  maxPatternLength: Number.POSITIVE_INFINITY,
  maxFilterTerms: Number.POSITIVE_INFINITY,
  aggregatesEnabled: true,
};

/** `count()` or `col.sum()` anywhere in the select tree (not the older `rel(count)`, always allowed). */
function selectsAggregates(items: SelectItem[]): boolean {
  return items.some(
    (i) =>
      i.type === 'count' ||
      (i.type === 'column' && i.aggregate !== undefined) ||
      (i.type === 'embed' && selectsAggregates(i.items)),
  );
}

/** Plans the request against `schema` and writes its SQL. Throws HttpError for anything invalid. */
export function prepare(
  schema: Schema,
  request: ApiRequest,
  body: unknown,
  limits: RequestLimits = UNBOUNDED,
): Prepared {
  checkFilterInputs(request, limits);
  if (!limits.aggregatesEnabled && selectsAggregates(request.select)) {
    throw new HttpError(400, 'Use of aggregate functions is not allowed', { code: 'PGRST123' });
  }
  const media = request.media;
  // A plan is small whatever the query; the statement explained is the one that would run.
  const bounds = new Bounds(media.kind === 'plan' ? { ...limits, maxResponseBytes: Infinity } : limits);
  // Every statement measures its body against the same limit, so the limit is recorded once here.
  let prepared: Prepared = { ...prepareStatement(schema, request, body, bounds), ...bounds.body };
  if (expectsOne(request, prepared.shape) && media.kind !== 'plan')
    prepared = { ...prepared, expectOne: true };
  const { prefer } = request;
  const changes = request.method === 'PATCH' || request.method === 'DELETE' || request.target.kind === 'rpc';
  if (prefer.handling === 'strict' && prefer.maxAffected !== undefined && changes) {
    prepared = { ...prepared, maxAffected: prefer.maxAffected };
  }
  if (media.kind === 'plan')
    prepared = { ...prepared, explain: { format: media.format, options: media.options } };
  return prepared;
}

/** The limits as the planner applies them: finite ones only. */
class Bounds {
  readonly body: { maxBodyBytes?: number };
  constructor(private readonly limits: RequestLimits) {
    this.body = Number.isFinite(limits.maxResponseBytes) ? { maxBodyBytes: limits.maxResponseBytes } : {};
  }
  read(plan: ReadPlan): ReadPlan {
    return Number.isFinite(this.limits.maxRows) ? capRead(plan, this.limits.maxRows) : plan;
  }
  get maxRows(): number {
    return this.limits.maxRows;
  }
  items(items: ReadPlan['items']): ReadPlan['items'] {
    return Number.isFinite(this.limits.maxRows) ? capEmbeds(items, this.limits.maxRows) : items;
  }
}

/** How the body is written, from the representation the client accepts. */
function bodyFormat(request: ApiRequest): { single: boolean; csv?: boolean; stripNulls?: boolean } {
  const media = request.media.kind === 'plan' ? request.media.target : request.media;
  if (media.kind === 'csv') return { single: false, csv: true };
  return { single: media.single, stripNulls: media.stripNulls };
}

/** The total for a read: counted exactly, estimated from the plan, or both (count=estimated). */
function countFor(
  request: ApiRequest,
  plan: ReadPlan,
  bounds: Bounds,
): Pick<Prepared, 'estimate'> & { exact: boolean } {
  const mode = request.prefer.count;
  if (mode === undefined) return { exact: false };
  if (mode === 'exact') return { exact: true };
  // count=estimated counts exactly up to the row limit and asks the planner beyond it.
  const estimate = { query: countEstimateQuery(plan), mode, maxRows: bounds.maxRows };
  return { exact: mode === 'estimated', estimate };
}

function prepareStatement(schema: Schema, request: ApiRequest, body: unknown, bounds: Bounds): Prepared {
  const readOnly = request.method === 'GET' || request.method === 'HEAD';
  const counted = request.prefer.count !== undefined;
  const options = {
    ...bodyFormat(request),
    representation: request.prefer.return === 'representation',
    ...bounds.body,
  };

  if (request.target.kind === 'rpc') return prepareCall(schema, request, body, readOnly, counted, bounds);

  const table = findTable(schema, request.target.name);
  switch (request.method) {
    case 'GET':
    case 'HEAD': {
      const plan = bounds.read(planRead(schema, request, table));
      const { exact, ...estimate } = countFor(request, plan, bounds);
      const query = readQuery(plan, { ...bodyFormat(request), count: exact, ...bounds.body });
      return { query, readOnly, shape: { kind: 'rows', counted }, ...estimate };
    }
    case 'POST': {
      const plan = planInsert(request, table, body);
      // return=headers-only answers a Location naming the new row by its primary key.
      const location = request.prefer.return === 'headers-only' && table.primaryKey.length > 0;
      const items = location
        ? table.primaryKey.map((column) => ({ kind: 'column' as const, column, as: column }))
        : bounds.items(planRead(schema, { ...request, filters: [] }, table).items);
      const writeOptions = location ? { single: false, representation: true, ...bounds.body } : options;
      return {
        query: insertQuery(plan, items, writeOptions),
        readOnly,
        bodyless: !writeOptions.representation,
        shape: {
          kind: 'write',
          created: true,
          merge: plan.conflict?.action === 'merge',
          ...(location ? { location: `/${table.name}` } : {}),
        },
      };
    }
    case 'PATCH': {
      const plan = planUpdate(request, table, body);
      const read = planRead(schema, request, table);
      return {
        query: updateQuery(plan, read.where, bounds.items(read.items), options),
        readOnly,
        bodyless: !options.representation,
        shape: { kind: 'write', created: false },
      };
    }
    case 'DELETE': {
      requireFilters(request, 'DELETE');
      const read = planRead(schema, request, table);
      return {
        query: deleteQuery(table, read.where, bounds.items(read.items), options),
        readOnly,
        bodyless: !options.representation,
        shape: { kind: 'write', created: false },
      };
    }
  }
}

function prepareCall(
  schema: Schema,
  request: ApiRequest,
  body: unknown,
  readOnly: boolean,
  counted: boolean,
  bounds: Bounds,
): Prepared {
  const named =
    !readOnly &&
    body !== null &&
    typeof body === 'object' &&
    !Array.isArray(body) &&
    !(body instanceof RawBody);
  const provided: Map<string, unknown> = readOnly
    ? new Map(request.rpcQueryArgs)
    : named
      ? new Map(Object.entries(body as Record<string, unknown>))
      : new Map();
  const mediaType = body instanceof RawBody ? body.mediaType : 'application/json';
  if (!readOnly && body !== undefined && !named && mediaType === 'application/json') {
    // Only a function with one unnamed json/jsonb parameter takes a JSON array or scalar.
    const takesBody = schema.functions
      .get(request.target.name)
      ?.some(
        (f) => f.args.length === 1 && f.args[0]!.name === '' && ['json', 'jsonb'].includes(f.args[0]!.type),
      );
    if (!takesBody)
      throw new HttpError(400, 'The body of an RPC call must be a JSON object of arguments', {
        code: 'PGRST102',
      });
  }
  const call = planCall(schema, request.target.name, { provided, body, readOnly, mediaType });
  const fn = call.fn;

  // Rows (a set, or one row of a table or composite type) take select, filters and order like a
  // table; a single row comes back as an object, or null when the filters leave nothing.
  if (fn.returnColumns) {
    const columns = resultTable(fn, schema);
    const plan: ReadPlan = bounds.read({
      ...planRead(schema, request, columns),
      source: { kind: 'function', call, columns },
    });
    if (!fn.returnsSet) {
      const query = readQuery(plan, { ...bodyFormat(request), single: true, count: false, ...bounds.body });
      return { query, readOnly, shape: { kind: 'value', void: false, ...(counted ? { counted } : {}) } };
    }
    const { exact, ...estimate } = countFor(request, plan, bounds);
    const query = readQuery(plan, { ...bodyFormat(request), count: exact, ...bounds.body });
    return { query, readOnly, shape: { kind: 'rows', counted }, ...estimate };
  }
  if (request.filters.length > 0 || request.order.length > 0) {
    throw new HttpError(
      400,
      `${fn.schema}.${fn.name} does not return rows, so it cannot be filtered or ordered`,
      {
        code: 'PGRST100',
      },
    );
  }
  if (fn.returnsSet)
    return {
      query: scalarSetCallQuery(call, bounds.body),
      readOnly,
      shape: { kind: 'value', void: false, set: true, ...(counted ? { counted } : {}) },
    };
  return {
    query: scalarCallQuery(call, bounds.body),
    readOnly,
    shape: { kind: 'value', void: fn.returnsVoid, ...(counted ? { counted } : {}) },
  };
}

/**
 * How much longer than the statement timeout the driver waits for an answer before it gives up
 * on the connection: the server cancels the statement first; this catches a connection that
 * stopped answering at all.
 */
const READ_TIMEOUT_MARGIN_MS = 2000;

function maxAffectedExceeded(rows: number): HttpError {
  return new HttpError(400, 'Query result exceeds max-affected preference constraint', {
    code: 'PGRST124',
    details: `The query affects ${rows} rows`,
  });
}

/** EXPLAIN with the options the client named, in the format it asked for. */
function explainStatement(query: Query, format: 'text' | 'json', options: readonly string[] = []): Statement {
  const list = [`format ${format}`, ...options].join(', ');
  return { text: `explain (${list}) ${query.text}`, values: query.values };
}

/** The planner's row estimate from EXPLAIN (FORMAT JSON). */
function plannedRows(rows: Record<string, unknown>[]): number {
  const plan = rows[0]?.['QUERY PLAN'] as { Plan?: { 'Plan Rows'?: unknown } }[] | undefined;
  const estimate = Number(plan?.[0]?.Plan?.['Plan Rows']);
  return Number.isFinite(estimate) ? estimate : 0;
}

/** The session settings a request asked for, as transaction-local settings. */
function sessionSettings(session: Session): [string, string][] {
  const settings: [string, string][] = [];
  if (session.timezone) settings.push(['timezone', session.timezone]);
  // The quoted name keeps a schema name with capitals or punctuation one name.
  if (session.searchPath)
    settings.push(['search_path', `"${session.searchPath.replace(/"/g, '""')}", public`]);
  if (session.request) {
    settings.push(
      ['request.method', session.request.method],
      ['request.path', session.request.path],
      ['request.headers', session.request.headers],
      ['request.cookies', session.request.cookies],
      ['tenantry.client_address', session.request.clientAddress ?? ''],
      ['tenantry.user_agent', session.request.userAgent ?? ''],
    );
  }
  return settings;
}

/** Runs the prepared statement as the caller, in one transaction and (for reads) one round trip. */
export async function execute(
  pool: Pool,
  claims: Claims,
  prepared: Prepared,
  session: Session = {},
): Promise<ResultRow> {
  const { query, readOnly, estimate } = prepared;
  const options = {
    readOnly,
    readTimeoutMs: statementTimeoutOf(pool) + READ_TIMEOUT_MARGIN_MS,
    settings: sessionSettings(session),
    ...(session.rollback ? { rollback: true } : {}),
  };
  if (prepared.explain) {
    // A plan request never keeps changes, even with analyze (which runs the statement).
    const explain = explainStatement(query, prepared.explain.format, prepared.explain.options);
    const [rows = []] = await runStatementsAsCaller(pool, claims, [explain], { ...options, rollback: true });
    const body =
      prepared.explain.format === 'json'
        ? JSON.stringify(rows[0]?.['QUERY PLAN'] ?? [])
        : rows.map((r) => String(r['QUERY PLAN'])).join('\n');
    return { body, rows: 0 };
  }
  const check = (results: Record<string, unknown>[][]): ResultRow => {
    const found = results[results.length - 1]?.[0];
    const row = (found ?? { body: null, rows: 0 }) as unknown as ResultRow;
    if (prepared.maxBodyBytes !== undefined && row.body === null && Number(row.body_bytes) > 0) {
      throw responseTooLarge(Number(row.body_bytes), prepared.maxBodyBytes);
    }
    if (prepared.expectOne && row.rows !== 1) throw notOneRow(row.rows);
    if (prepared.maxAffected !== undefined && row.rows > prepared.maxAffected) {
      throw maxAffectedExceeded(row.rows);
    }
    if (estimate) {
      const planned = plannedRows(results[0] ?? []);
      const exact = Number(row.total ?? 0);
      row.total =
        estimate.mode === 'planned' ? planned : exact > estimate.maxRows ? Math.max(exact, planned) : exact;
    }
    return row;
  };
  const statements: Statement[] = estimate ? [explainStatement(estimate.query, 'json'), query] : [query];
  // A read commits in the same round trip: refusing its answer afterwards undoes nothing because
  // it changed nothing. So does a write that nothing about its result can refuse (no body to be
  // too large, no .single(), no max-affected). Any other write is checked first (too large, not
  // exactly one row, more rows than max-affected), so a refused write changes nothing; its
  // commit is a second round trip.
  const refusable =
    prepared.expectOne === true ||
    prepared.maxAffected !== undefined ||
    (prepared.maxBodyBytes !== undefined && prepared.bodyless !== true);
  if (readOnly || !refusable) return check(await runStatementsAsCaller(pool, claims, statements, options));
  let row: ResultRow | undefined;
  await runStatementsAsCaller(pool, claims, statements, {
    ...options,
    beforeCommit: (results) => void (row = check(results)),
  });
  return row!;
}
