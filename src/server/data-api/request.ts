// In charge of turning an HTTP request into a typed data-API request: which table or function,
// the select tree, filters, order, paging, and the Prefer/Accept/Range preferences. Pure.
import { HttpError } from '../http/errors.js';
import {
  parseFilterParam,
  parseNonNegativeInteger,
  parseColumnName,
  parseOrder,
  parseSelect,
  splitTopLevel,
  syntaxError,
  type FilterNode,
  type OrderTerm,
  type SelectItem,
} from './grammar.js';
import { negotiate, type OutputMedia } from './media-types.js';
import { parsePrefer, type Preferences } from './preferences.js';
import type { HeaderReader } from '../http/headers.js';

export { parsePrefer, type Preferences } from './preferences.js';

export type Method = 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'DELETE';

export interface EmbedOptions {
  order: OrderTerm[];
  limit?: number;
  offset?: number;
}

export interface ApiRequest {
  target: { kind: 'table' | 'rpc'; name: string };
  method: Method;
  select: SelectItem[];
  /** combined with AND */
  filters: FilterNode[];
  order: OrderTerm[];
  limit?: number;
  offset?: number;
  embedOptions: Map<string, EmbedOptions>;
  prefer: Preferences;
  /** application/vnd.pgrst.object+json: exactly one row, as an object */
  single: boolean;
  /** the representation the client accepts (JSON, CSV or the query plan) */
  media: OutputMedia;
  /** the exposed schema the request addresses (Accept-Profile / Content-Profile, else the first) */
  schema: string;
  /** several schemas are exposed, so the response names the one it answers from (Content-Profile) */
  profile: boolean;
  onConflict?: string[];
  columns?: string[];
  /** GET /rpc arguments (query parameters that are not reserved words or filters) */
  rpcQueryArgs: Map<string, string | string[]>;
}

const RESERVED = new Set(['select', 'order', 'limit', 'offset', 'on_conflict', 'columns']);

function parseRange(header: string | null): { offset: number; limit?: number } | null {
  if (!header) return null;
  const match = /^\s*(\d{1,9})-(\d{0,9})\s*$/.exec(header);
  if (!match)
    throw new HttpError(416, 'Requested range not satisfiable', { code: 'PGRST103', details: header });
  const from = Number(match[1]);
  if (match[2] === '') return { offset: from };
  const to = Number(match[2]);
  if (to < from)
    throw new HttpError(416, 'Requested range not satisfiable', { code: 'PGRST103', details: header });
  return { offset: from, limit: to - from + 1 };
}

function columnList(raw: string, what: string): string[] {
  return splitTopLevel(raw).map((c) => {
    const trimmed = c.trim();
    // A quoted name may hold spaces and punctuation, as in select.
    return parseColumnName(trimmed, `${what} column`);
  });
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw syntaxError('The path is not valid percent-encoded UTF-8');
  }
}

/** `/<table>` or `/rpc/<function>`; anything else names no resource. */
export function splitPath(path: string): ApiRequest['target'] {
  const segments = path.split('/').filter(Boolean);
  if (segments.length === 1) return { kind: 'table', name: decodeSegment(segments[0]!) };
  if (segments.length === 2 && segments[0] === 'rpc')
    return { kind: 'rpc', name: decodeSegment(segments[1]!) };
  throw new HttpError(404, `Invalid path: ${path.slice(0, 200)}`, {
    code: 'PGRST125',
    hint: 'Use /rest/v1/<table> or /rest/v1/rpc/<function>',
  });
}

/** What the server exposes and allows: PostgREST's db-schemas, db-tx-end and db-plan-enabled. */
export interface RequestPolicy {
  schemas: readonly string[];
  txOverride: boolean;
  planEnabled: boolean;
}

const DEFAULT_POLICY: RequestPolicy = { schemas: ['public'], txOverride: false, planEnabled: false };

/** The schema named by Accept-Profile (reads) or Content-Profile (writes); 406 PGRST106 if not exposed. */
export function chooseSchema(method: string, headers: HeaderReader, schemas: readonly string[]): string {
  const profile = headers.get(method === 'GET' || method === 'HEAD' ? 'accept-profile' : 'content-profile');
  if (profile === null) return schemas[0]!;
  if (!schemas.includes(profile)) {
    throw new HttpError(406, `Invalid schema: ${profile.slice(0, 63)}`, {
      code: 'PGRST106',
      hint: `Only the following schemas are exposed: ${schemas.join(', ')}`,
    });
  }
  return profile;
}

export function parseApiRequest(
  method: string,
  path: string,
  params: URLSearchParams,
  headers: HeaderReader,
  /** for GET /rpc: the function's argument names, which are arguments rather than filters */
  rpcArgumentNames: ReadonlySet<string> = new Set(),
  policy: RequestPolicy = DEFAULT_POLICY,
): ApiRequest {
  if (!['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'].includes(method)) {
    throw new HttpError(405, `Method ${method} is not supported`, { code: 'PGRST117' });
  }
  const target = splitPath(path);

  const schema = chooseSchema(method, headers, policy.schemas);
  const media = negotiate(headers.get('accept'), policy);

  const request: ApiRequest = {
    target,
    method: method as Method,
    select: parseSelect(params.get('select') ?? undefined),
    filters: [],
    order: [],
    embedOptions: new Map(),
    prefer: parsePrefer(headers.get('prefer'), policy),
    single:
      media.kind === 'json'
        ? media.single
        : media.kind === 'plan' && media.target.kind === 'json' && media.target.single,
    media,
    schema,
    profile: policy.schemas.length > 1,
    rpcQueryArgs: new Map(),
  };
  const embed = (path: string) => {
    let options = request.embedOptions.get(path);
    if (!options) request.embedOptions.set(path, (options = { order: [] }));
    return options;
  };

  for (const [key, value] of params) {
    if (value.length > 100_000) throw syntaxError(`The value of "${key}" is too long`);
    if (key === 'select' || key === 'columns' || key === 'on_conflict') continue;
    if (key === 'order') request.order = parseOrder(value);
    else if (key === 'limit') request.limit = parseNonNegativeInteger(value, 'limit');
    else if (key === 'offset') request.offset = parseNonNegativeInteger(value, 'offset');
    else if (/^[^.]+\.(order|limit|offset)$/.test(key)) {
      const [relation, what] = key.split('.') as [string, 'order' | 'limit' | 'offset'];
      if (what === 'order') embed(relation).order = parseOrder(value, [relation]);
      else embed(relation)[what] = parseNonNegativeInteger(value, key);
    } else if (target.kind === 'rpc' && rpcArgumentNames.has(key) && !RESERVED.has(key)) {
      // A repeated argument (`?ids=1&ids=2`) is an array, as PostgREST reads it.
      const earlier = request.rpcQueryArgs.get(key);
      request.rpcQueryArgs.set(
        key,
        earlier === undefined ? value : [...(Array.isArray(earlier) ? earlier : [earlier]), value],
      );
    } else {
      request.filters.push(parseFilterParam(key, value));
    }
  }

  const onConflict = params.get('on_conflict');
  if (onConflict) request.onConflict = columnList(onConflict, 'on_conflict');
  const columns = params.get('columns');
  if (columns) request.columns = columnList(columns, 'columns');

  if (method === 'GET' || method === 'HEAD') {
    const range = parseRange(headers.get('range'));
    if (range) {
      request.offset ??= range.offset;
      if (range.limit !== undefined) request.limit = Math.min(request.limit ?? Infinity, range.limit);
    }
  }
  return request;
}
