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

export type Method = 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'DELETE';

export interface Preferences {
  return: 'minimal' | 'representation' | 'headers-only';
  count?: 'exact' | 'planned' | 'estimated';
  resolution?: 'merge-duplicates' | 'ignore-duplicates';
  missing: 'default' | 'null';
  /** what the response's Preference-Applied header repeats */
  applied: string[];
}

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
  onConflict?: string[];
  columns?: string[];
  /** GET /rpc arguments (query parameters that are not reserved words or filters) */
  rpcQueryArgs: Map<string, string>;
}

const RESERVED = new Set(['select', 'order', 'limit', 'offset', 'on_conflict', 'columns']);

export function parsePrefer(header: string | null): Preferences {
  const prefer: Preferences = { return: 'minimal', missing: 'null', applied: [] };
  if (!header) return prefer;
  for (const token of header
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)) {
    const [key, value] = token.split('=').map((s) => s.trim());
    if (key === 'return' && (value === 'minimal' || value === 'representation' || value === 'headers-only')) {
      prefer.return = value;
      prefer.applied.push(token);
    } else if (key === 'count' && (value === 'exact' || value === 'planned' || value === 'estimated')) {
      prefer.count = value;
      prefer.applied.push(token);
    } else if (key === 'resolution' && (value === 'merge-duplicates' || value === 'ignore-duplicates')) {
      prefer.resolution = value;
      prefer.applied.push(token);
    } else if (key === 'missing' && (value === 'default' || value === 'null')) {
      prefer.missing = value;
      prefer.applied.push(token);
    }
    // Unknown preferences are ignored, as PostgREST does with handling=lenient (its default).
  }
  return prefer;
}

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

function acceptsSingle(accept: string | null): boolean {
  if (!accept) return false;
  const types = accept.split(',').map((t) => t.split(';')[0]!.trim().toLowerCase());
  if (types.includes('application/vnd.pgrst.object+json') || types.includes('application/vnd.pgrst.object')) {
    return true;
  }
  const acceptable = [
    'application/json',
    'application/*',
    '*/*',
    'text/*',
    'application/vnd.pgrst.array+json',
  ];
  if (!types.some((t) => acceptable.includes(t) || t === '')) {
    throw new HttpError(406, `None of these media types are available: ${accept}`, { code: 'PGRST107' });
  }
  return false;
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

export function parseApiRequest(
  method: string,
  path: string,
  params: URLSearchParams,
  headers: Headers,
  /** for GET /rpc: the function's argument names, which are arguments rather than filters */
  rpcArgumentNames: ReadonlySet<string> = new Set(),
): ApiRequest {
  if (!['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'].includes(method)) {
    throw new HttpError(405, `Method ${method} is not supported`, { code: 'PGRST117' });
  }
  const target = splitPath(path);

  const profile = headers.get(method === 'GET' || method === 'HEAD' ? 'accept-profile' : 'content-profile');
  if (profile && profile !== 'public') {
    throw new HttpError(406, `The schema must be one of the following: public`, { code: 'PGRST106' });
  }

  const request: ApiRequest = {
    target,
    method: method as Method,
    select: parseSelect(params.get('select') ?? undefined),
    filters: [],
    order: [],
    embedOptions: new Map(),
    prefer: parsePrefer(headers.get('prefer')),
    single: acceptsSingle(headers.get('accept')),
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
      request.rpcQueryArgs.set(key, value);
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
