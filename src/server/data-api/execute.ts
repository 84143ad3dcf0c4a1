// In charge of running a data-API request: the only module that touches the database. It picks
// the plan for the request, runs the SQL in one withRls transaction as the caller (read-only for
// GET/HEAD), and shapes the response: status, Content-Range, Preference-Applied and body.
import type { Pool } from '../db/pool.js';
import { withRls, type Claims, type Tx } from '../db/transactions.js';
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

const JSON_TYPE = 'application/json; charset=utf-8';
const OBJECT_TYPE = 'application/vnd.pgrst.object+json; charset=utf-8';

interface Rows {
  body: string | null;
  rows: number;
  total?: string | number | null;
}

async function run(tx: Tx, query: Query): Promise<Rows> {
  const result = await tx.query<Rows>({ text: query.text, values: query.values });
  return result.rows[0] ?? { body: null, rows: 0 };
}

function singleCheck(request: ApiRequest, rows: number): void {
  if (request.single && rows !== 1) {
    throw new HttpError(406, 'Cannot coerce the result to a single JSON object', {
      code: 'PGRST116',
      details: `The result contains ${rows} rows`,
    });
  }
}

function headers(request: ApiRequest, extra: Record<string, string> = {}): Record<string, string> {
  const h: Record<string, string> = { 'content-type': request.single ? OBJECT_TYPE : JSON_TYPE, ...extra };
  if (request.prefer.applied.length > 0) h['preference-applied'] = request.prefer.applied.join(', ');
  return h;
}

function readResponse(request: ApiRequest, result: Rows, counted: boolean): Response {
  singleCheck(request, result.rows);
  const offset = request.offset ?? 0;
  const total = counted ? Number(result.total ?? 0) : undefined;
  if (total !== undefined && offset > 0 && offset >= total) {
    throw new HttpError(416, 'Requested range not satisfiable', {
      code: 'PGRST103',
      details: `An offset of ${offset} was requested, but there are only ${total} rows.`,
    });
  }
  const range =
    result.rows > 0 ? `${offset}-${offset + result.rows - 1}/${total ?? '*'}` : `*/${total ?? '*'}`;
  const status = total !== undefined && result.rows < total ? 206 : 200;
  const body = request.method === 'HEAD' ? null : (result.body ?? '[]');
  return new Response(body, { status, headers: headers(request, { 'content-range': range }) });
}

function writeResponse(request: ApiRequest, result: Rows, created: boolean): Response {
  const representation = request.prefer.return === 'representation';
  if (representation) singleCheck(request, result.rows);
  const range = created ? '*/*' : result.rows > 0 ? `0-${result.rows - 1}/*` : '*/*';
  if (!representation) {
    return new Response(null, {
      status: created ? 201 : 204,
      headers: headers(request, { 'content-range': range }),
    });
  }
  return new Response(result.body ?? '[]', {
    status: created ? 201 : 200,
    headers: headers(request, { 'content-range': range }),
  });
}

export interface ExecuteInput {
  request: ApiRequest;
  schema: Schema;
  claims: Claims;
  /** the parsed JSON body (writes and POST /rpc) */
  body: unknown;
}

export async function execute(pool: Pool, input: ExecuteInput): Promise<Response> {
  const { request, schema, claims, body } = input;
  const readOnly = request.method === 'GET' || request.method === 'HEAD';
  const counted = request.prefer.count !== undefined;
  const options = { single: request.single, representation: request.prefer.return === 'representation' };

  if (request.target.kind === 'rpc') return executeCall(pool, input, readOnly, counted);

  const table = findTable(schema, request.target.name);
  switch (request.method) {
    case 'GET':
    case 'HEAD': {
      const query = readQuery(planRead(schema, request, table), { single: request.single, count: counted });
      const result = await withRls(pool, claims, (tx) => run(tx, query), { readOnly });
      return readResponse(request, result, counted);
    }
    case 'POST': {
      const plan = planInsert(request, table, body);
      const items = planRead(schema, { ...request, filters: [] }, table).items;
      const result = await withRls(pool, claims, (tx) => run(tx, insertQuery(plan, items, options)));
      return writeResponse(request, result, true);
    }
    case 'PATCH': {
      const plan = planUpdate(request, table, body);
      const read = planRead(schema, request, table);
      const result = await withRls(pool, claims, (tx) =>
        run(tx, updateQuery(plan, read.where, read.items, options)),
      );
      return writeResponse(request, result, false);
    }
    case 'DELETE': {
      requireFilters(request, 'DELETE');
      const read = planRead(schema, request, table);
      const result = await withRls(pool, claims, (tx) =>
        run(tx, deleteQuery(table.name, read.where, read.items, options)),
      );
      return writeResponse(request, result, false);
    }
  }
}

async function executeCall(
  pool: Pool,
  input: ExecuteInput,
  readOnly: boolean,
  counted: boolean,
): Promise<Response> {
  const { request, schema, claims, body } = input;
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
  const call = planCall(schema, request.target.name, provided, body);
  const fn = call.fn;

  if (fn.returnsSet && fn.returnColumns) {
    const columns = resultTable(fn, schema);
    const plan: ReadPlan = {
      ...planRead(schema, request, columns),
      source: { kind: 'function', call, columns },
    };
    const query = readQuery(plan, { single: request.single, count: counted });
    const result = await withRls(pool, claims, (tx) => run(tx, query), { readOnly });
    return readResponse(request, result, counted);
  }
  if (request.filters.length > 0) {
    throw new HttpError(400, `public.${fn.name} does not return rows, so it cannot be filtered`, {
      code: 'PGRST100',
    });
  }
  const query = fn.returnsSet ? scalarSetCallQuery(call) : scalarCallQuery(call);
  const result = await withRls(pool, claims, (tx) => run(tx, query), { readOnly });
  if (fn.returnsVoid) return new Response(null, { status: 204 });
  const payload = request.method === 'HEAD' ? null : (result.body ?? 'null');
  return new Response(payload, { status: 200, headers: headers({ ...request, single: false }) });
}
