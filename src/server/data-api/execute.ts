// In charge of running a data-API request, and the only module that touches the database.
// prepare() is pure: it plans the request against a schema, within the request limits, and
// writes its one SQL statement; execute() runs that statement as the caller in one transaction
// (read-only for GET/HEAD), sent with the caller's settings as one message, and hands the single
// result row to response.ts.
import { statementTimeoutOf, type Pool } from '../db/pool.js';
import { runAsCaller, type Claims } from '../db/transactions.js';
import { HttpError } from '../http/errors.js';
import {
  findTable,
  planCall,
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
import {
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
  const bounds = new Bounds(limits);
  // Every statement measures its body against the same limit, so the limit is recorded once here.
  const prepared = { ...prepareStatement(schema, request, body, bounds), ...bounds.body };
  return expectsOne(request, prepared.shape) ? { ...prepared, expectOne: true } : prepared;
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
  items(items: ReadPlan['items']): ReadPlan['items'] {
    return Number.isFinite(this.limits.maxRows) ? capEmbeds(items, this.limits.maxRows) : items;
  }
}

function prepareStatement(schema: Schema, request: ApiRequest, body: unknown, bounds: Bounds): Prepared {
  const readOnly = request.method === 'GET' || request.method === 'HEAD';
  const counted = request.prefer.count !== undefined;
  const options = {
    single: request.single,
    representation: request.prefer.return === 'representation',
    ...bounds.body,
  };

  if (request.target.kind === 'rpc') return prepareCall(schema, request, body, readOnly, counted, bounds);

  const table = findTable(schema, request.target.name);
  switch (request.method) {
    case 'GET':
    case 'HEAD': {
      const plan = bounds.read(planRead(schema, request, table));
      const query = readQuery(plan, { single: request.single, count: counted, ...bounds.body });
      return { query, readOnly, shape: { kind: 'rows', counted } };
    }
    case 'POST': {
      const plan = planInsert(request, table, body);
      const items = bounds.items(planRead(schema, { ...request, filters: [] }, table).items);
      return {
        query: insertQuery(plan, items, options),
        readOnly,
        shape: { kind: 'write', created: true, merge: plan.conflict?.action === 'merge' },
      };
    }
    case 'PATCH': {
      const plan = planUpdate(request, table, body);
      const read = planRead(schema, request, table);
      return {
        query: updateQuery(plan, read.where, bounds.items(read.items), options),
        readOnly,
        shape: { kind: 'write', created: false },
      };
    }
    case 'DELETE': {
      requireFilters(request, 'DELETE');
      const read = planRead(schema, request, table);
      return {
        query: deleteQuery(table.name, read.where, bounds.items(read.items), options),
        readOnly,
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
  let provided: Map<string, unknown>;
  if (readOnly) {
    provided = new Map(request.rpcQueryArgs);
  } else {
    if (body !== undefined && (body === null || typeof body !== 'object' || Array.isArray(body))) {
      const fn = schema.functions.get(request.target.name)?.find((f) => f.singleJsonArgument);
      if (!fn)
        throw new HttpError(400, 'The body of an RPC call must be a JSON object of arguments', {
          code: 'PGRST102',
        });
    }
    provided =
      body && typeof body === 'object' && !Array.isArray(body)
        ? new Map(Object.entries(body as Record<string, unknown>))
        : new Map();
  }
  const call = planCall(schema, request.target.name, provided, body, { readOnly });
  const fn = call.fn;

  if (fn.returnsSet && fn.returnColumns) {
    const columns = resultTable(fn, schema);
    const plan: ReadPlan = bounds.read({
      ...planRead(schema, request, columns),
      source: { kind: 'function', call, columns },
    });
    const query = readQuery(plan, { single: request.single, count: counted, ...bounds.body });
    return { query, readOnly, shape: { kind: 'rows', counted } };
  }
  if (request.filters.length > 0 || request.order.length > 0) {
    throw new HttpError(400, `public.${fn.name} does not return rows, so it cannot be filtered or ordered`, {
      code: 'PGRST100',
    });
  }
  if (fn.returnsSet)
    return {
      query: scalarSetCallQuery(call, bounds.body),
      readOnly,
      shape: { kind: 'value', void: false },
    };
  return {
    query: scalarCallQuery(call, bounds.body),
    readOnly,
    shape: { kind: 'value', void: fn.returnsVoid },
  };
}

/**
 * How much longer than the statement timeout the driver waits for an answer before it gives up
 * on the connection: the server cancels the statement first; this catches a connection that
 * stopped answering at all.
 */
const READ_TIMEOUT_MARGIN_MS = 2000;

/** Runs the prepared statement as the caller, in one transaction and (for reads) one round trip. */
export async function execute(pool: Pool, claims: Claims, prepared: Prepared): Promise<ResultRow> {
  const { query, readOnly } = prepared;
  const check = (found: Record<string, unknown> | undefined): ResultRow => {
    const row = (found ?? { body: null, rows: 0 }) as unknown as ResultRow;
    if (prepared.maxBodyBytes !== undefined && row.body === null && Number(row.body_bytes) > 0) {
      throw responseTooLarge(Number(row.body_bytes), prepared.maxBodyBytes);
    }
    if (prepared.expectOne && row.rows !== 1) throw notOneRow(row.rows);
    return row;
  };
  const options = { readOnly, readTimeoutMs: statementTimeoutOf(pool) + READ_TIMEOUT_MARGIN_MS };
  // A read commits in the same message: refusing its answer afterwards undoes nothing because it
  // changed nothing. A write is checked first (too large, or not exactly one row for .single()),
  // so a refused write changes nothing; its commit is a second round trip.
  if (readOnly) return check(await runAsCaller(pool, claims, query, options));
  let row: ResultRow | undefined;
  await runAsCaller(pool, claims, query, { ...options, beforeCommit: (found) => void (row = check(found)) });
  return row!;
}
