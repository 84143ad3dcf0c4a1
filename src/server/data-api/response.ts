// In charge of turning what the database answered into PostgREST's HTTP response: the status
// (200/201/204/206/416/406), Content-Range, Content-Type, Preference-Applied, Content-Profile,
// Location, and the body, which arrives from Postgres as ready JSON or CSV text and is passed
// through untouched, as a Reply (http/reply.ts). Pure.
import { HttpError } from '../http/errors.js';
import { reply, type Reply } from '../http/reply.js';
import type { DataMedia, OutputMedia } from './media-types.js';
import { appliedPreferences, type RequestKind } from './preferences.js';
import type { ApiRequest } from './request.js';

const JSON_TYPE = 'application/json; charset=utf-8';

function dataType(media: DataMedia, single: boolean): string {
  if (media.kind === 'csv') return 'text/csv; charset=utf-8';
  const nulls = media.stripNulls ? ';nulls=stripped' : '';
  if (single) return `application/vnd.pgrst.object+json${nulls}; charset=utf-8`;
  return nulls ? `application/vnd.pgrst.array+json${nulls}; charset=utf-8` : JSON_TYPE;
}

function forName(media: DataMedia): string {
  if (media.kind === 'csv') return 'text/csv';
  return media.single ? 'application/vnd.pgrst.object+json' : 'application/json';
}

/** The Content-Type of a response in `media`; `single` says whether the body is one object. */
export function contentType(media: OutputMedia, single: boolean): string {
  if (media.kind === 'plan') {
    return `application/vnd.pgrst.plan+${media.format}; for="${forName(media.target)}"; charset=utf-8`;
  }
  return dataType(media, single);
}

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
  /** location: return=headers-only, the path the Location header names the first new row under */
  | { kind: 'write'; created: boolean; merge?: boolean; location?: string }
  /** set: a function returning a set of scalars (one value per row) */
  | { kind: 'value'; void: boolean; counted?: boolean; set?: boolean };

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

function requestKind(request: ApiRequest): RequestKind {
  if (request.target.kind === 'rpc') return 'call';
  if (request.method === 'POST') return 'create';
  if (request.method === 'PATCH') return 'update';
  if (request.method === 'DELETE') return 'delete';
  return 'read';
}

function headers(
  request: ApiRequest,
  single: boolean,
  extra: Record<string, string>,
): Record<string, string> {
  const h: Record<string, string> = { 'content-type': contentType(request.media, single), ...extra };
  const applied = appliedPreferences(request.prefer, requestKind(request));
  if (applied) h['preference-applied'] = applied;
  if (request.profile) h['content-profile'] = request.schema;
  return h;
}

/** Content-Range for a write or a call: `0-(n-1)/total`, or `*` for the range when it is empty. */
function writtenRange(rows: number, total: number | undefined, insert = false): string {
  const range = !insert && rows > 0 ? `0-${rows - 1}` : '*';
  return `${range}/${total ?? '*'}`;
}

/** The Location of the first new row: `/table?pk=eq.value`, as PostgREST answers return=headers-only. */
function locationOf(path: string, body: string | null): string | null {
  const rows = JSON.parse(body ?? '[]') as Record<string, unknown>[];
  const first = rows[0];
  if (!first) return null;
  const query = Object.entries(first)
    .map(([k, v]) => `${encodeURIComponent(k)}=eq.${encodeURIComponent(v === null ? 'null' : String(v))}`)
    .join('&');
  return `${path}?${query}`;
}

function rowsResponse(request: ApiRequest, result: ResultRow, counted: boolean): Reply {
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
  return reply(body, status, headers(request, request.single, { 'content-range': range }));
}

function writeResponse(
  request: ApiRequest,
  result: ResultRow,
  insert: boolean,
  merge: boolean,
  location?: string,
): Reply {
  // An upsert that only updated existing rows created nothing: 200, as PostgREST answers.
  const created = insert && !(merge && result.inserted === 0);
  const representation = request.prefer.return === 'representation';
  if (representation) singleCheck(request, result.rows);
  // Prefer: count=exact on a write counts the rows it changed.
  const total = request.prefer.count !== undefined ? result.rows : undefined;
  const extra: Record<string, string> = { 'content-range': writtenRange(result.rows, total, insert) };
  if (location) {
    const where = locationOf(location, result.body);
    if (where) extra.location = where;
  }
  if (!representation) {
    return reply(null, insert ? (created ? 201 : 200) : 204, headers(request, false, extra));
  }
  return reply(result.body ?? '[]', created ? 201 : 200, headers(request, request.single, extra));
}

function valueResponse(
  request: ApiRequest,
  result: ResultRow,
  shape: Extract<ResultShape, { kind: 'value' }>,
): Reply {
  if (shape.void) return reply(null, 204, headers(request, false, {}));
  // A single value counts as one row; a set of values as its values.
  const rows = shape.set ? result.rows : 1;
  const range = writtenRange(rows, shape.counted ? rows : undefined);
  const body = request.method === 'HEAD' ? null : (result.body ?? 'null');
  return reply(body, 200, headers(request, false, { 'content-range': range }));
}

/** Accept: application/vnd.pgrst.plan: the EXPLAIN output, whatever the statement was. */
function planResponse(request: ApiRequest, result: ResultRow): Reply {
  const body = request.method === 'HEAD' ? null : result.body;
  return reply(body, 200, headers(request, false, {}));
}

export function respond(request: ApiRequest, shape: ResultShape, result: ResultRow): Reply {
  if (request.media.kind === 'plan') return planResponse(request, result);
  switch (shape.kind) {
    case 'rows':
      return rowsResponse(request, result, shape.counted);
    case 'write':
      return writeResponse(request, result, shape.created, shape.merge ?? false, shape.location);
    case 'value':
      return valueResponse(request, result, shape);
  }
}
