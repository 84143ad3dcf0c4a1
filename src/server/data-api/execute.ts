// In charge of running a data-API request, and the only module that touches the database.
// prepare() is pure: it plans the request against a schema and writes its one SQL statement;
// execute() runs that statement in one withRls transaction as the caller (read-only for
// GET/HEAD) and hands the single result row to response.ts.
import type { Pool } from '../db/pool.js';
import { withRls, type Claims } from '../db/transactions.js';
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
}

/** Plans the request against `schema` and writes its SQL. Throws HttpError for anything invalid. */
export function prepare(schema: Schema, request: ApiRequest, body: unknown): Prepared {
  const prepared = prepareStatement(schema, request, body);
  return expectsOne(request, prepared.shape) ? { ...prepared, expectOne: true } : prepared;
}

function prepareStatement(schema: Schema, request: ApiRequest, body: unknown): Prepared {
  const readOnly = request.method === 'GET' || request.method === 'HEAD';
  const counted = request.prefer.count !== undefined;
  const options = { single: request.single, representation: request.prefer.return === 'representation' };

  if (request.target.kind === 'rpc') return prepareCall(schema, request, body, readOnly, counted);

  const table = findTable(schema, request.target.name);
  switch (request.method) {
    case 'GET':
    case 'HEAD': {
      const query = readQuery(planRead(schema, request, table), { single: request.single, count: counted });
      return { query, readOnly, shape: { kind: 'rows', counted } };
    }
    case 'POST': {
      const plan = planInsert(request, table, body);
      const items = planRead(schema, { ...request, filters: [] }, table).items;
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
        query: updateQuery(plan, read.where, read.items, options),
        readOnly,
        shape: { kind: 'write', created: false },
      };
    }
    case 'DELETE': {
      requireFilters(request, 'DELETE');
      const read = planRead(schema, request, table);
      return {
        query: deleteQuery(table.name, read.where, read.items, options),
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
    const plan: ReadPlan = {
      ...planRead(schema, request, columns),
      source: { kind: 'function', call, columns },
    };
    const query = readQuery(plan, { single: request.single, count: counted });
    return { query, readOnly, shape: { kind: 'rows', counted } };
  }
  if (request.filters.length > 0 || request.order.length > 0) {
    throw new HttpError(400, `public.${fn.name} does not return rows, so it cannot be filtered or ordered`, {
      code: 'PGRST100',
    });
  }
  if (fn.returnsSet)
    return { query: scalarSetCallQuery(call), readOnly, shape: { kind: 'value', void: false } };
  return { query: scalarCallQuery(call), readOnly, shape: { kind: 'value', void: fn.returnsVoid } };
}

/** Runs the prepared statement as the caller, in one transaction. */
export async function execute(pool: Pool, claims: Claims, prepared: Prepared): Promise<ResultRow> {
  const { query, readOnly } = prepared;
  return withRls(
    pool,
    claims,
    async (tx) => {
      const result = await tx.query<ResultRow>({ text: query.text, values: query.values });
      const row = result.rows[0] ?? { body: null, rows: 0 };
      // Checked before commit: a .single() write that touched 0 or 2+ rows must change nothing.
      if (prepared.expectOne && row.rows !== 1) throw notOneRow(row.rows);
      return row;
    },
    { readOnly },
  );
}
