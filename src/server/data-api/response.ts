// In charge of turning what the database answered into PostgREST's HTTP response: the status
// (200/201/204/206/416/406), Content-Range, Content-Type, Preference-Applied, and the body, which
// arrives from Postgres as ready JSON text and is passed through untouched. Pure.
import { HttpError } from '../http/errors.js';
import type { ApiRequest } from './request.js';

const JSON_TYPE = 'application/json; charset=utf-8';
const OBJECT_TYPE = 'application/vnd.pgrst.object+json; charset=utf-8';

/** One row from the statement sql.ts writes: the JSON body, the row count, maybe a total. */
export interface ResultRow {
  body: string | null;
  rows: number;
  total?: string | number | null;
  /** for a merging upsert: how many of the rows were new */
  inserted?: number;
  /** the body's size when the statement was asked to measure it (the body is NULL when too large) */
  body_bytes?: number | null;
}

/** What the statement was, so the response can be shaped: rows read, rows written, or a value. */
export type ResultShape =
  | { kind: 'rows'; counted: boolean }
  | { kind: 'write'; created: boolean; merge?: boolean }
  | { kind: 'value'; void: boolean };

/** Whether the client asked for exactly one row as an object, so any other count is a 406. */
export function expectsOne(request: ApiRequest, shape: ResultShape): boolean {
  if (!request.single) return false;
  if (shape.kind === 'rows') return true;
  return shape.kind === 'write' && request.prefer.return === 'representation';
}

export function notOneRow(rows: number): HttpError {
  return new HttpError(406, 'Cannot coerce the result to a single JSON object', {
    code: 'PGRST116',
    details: `The result contains ${rows} rows`,
  });
}

function singleCheck(request: ApiRequest, rows: number): void {
  if (request.single && rows !== 1) throw notOneRow(rows);
}

function headers(
  request: ApiRequest,
  single: boolean,
  extra: Record<string, string>,
): Record<string, string> {
  const h: Record<string, string> = { 'content-type': single ? OBJECT_TYPE : JSON_TYPE, ...extra };
  if (request.prefer.applied.length > 0) h['preference-applied'] = request.prefer.applied.join(', ');
  return h;
}

function rowsResponse(request: ApiRequest, result: ResultRow, counted: boolean): Response {
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
  return new Response(body, {
    status,
    headers: headers(request, request.single, { 'content-range': range }),
  });
}

function writeResponse(request: ApiRequest, result: ResultRow, insert: boolean, merge: boolean): Response {
  // An upsert that only updated existing rows created nothing: 200, as PostgREST answers.
  const created = insert && !(merge && result.inserted === 0);
  const representation = request.prefer.return === 'representation';
  if (representation) singleCheck(request, result.rows);
  const range = insert ? '*/*' : result.rows > 0 ? `0-${result.rows - 1}/*` : '*/*';
  const extra = { 'content-range': range };
  if (!representation) {
    return new Response(null, {
      status: insert ? (created ? 201 : 200) : 204,
      headers: headers(request, false, extra),
    });
  }
  return new Response(result.body ?? '[]', {
    status: created ? 201 : 200,
    headers: headers(request, request.single, extra),
  });
}

function valueResponse(request: ApiRequest, result: ResultRow, isVoid: boolean): Response {
  if (isVoid) return new Response(null, { status: 204, headers: headers(request, false, {}) });
  const body = request.method === 'HEAD' ? null : (result.body ?? 'null');
  return new Response(body, { status: 200, headers: headers(request, false, {}) });
}

export function respond(request: ApiRequest, shape: ResultShape, result: ResultRow): Response {
  switch (shape.kind) {
    case 'rows':
      return rowsResponse(request, result, shape.counted);
    case 'write':
      return writeResponse(request, result, shape.created, shape.merge ?? false);
    case 'value':
      return valueResponse(request, result, shape.void);
  }
}
