// In charge of choosing which function a /rpc call runs, as PostgREST chooses: overloads told
// apart by argument names (required and optional), one unnamed json/jsonb/text/xml/bytea
// parameter taking the whole body, row-type arguments, and PGRST202/203 answers that name what
// was searched for. Pure.
import { HttpError } from '../http/errors.js';
import type { FunctionCall } from './plan.js';
import type { DbFunction, Schema } from './schema-cache.js';

/** A body that is not JSON: text/plain, text/xml or application/octet-stream, for one unnamed parameter. */
export class RawBody {
  constructor(
    readonly mediaType: 'text/plain' | 'text/xml' | 'application/octet-stream',
    readonly text: string,
  ) {}
}

/** The parameter type a whole body of each media type goes to. */
const BODY_TYPES: Record<string, string[]> = {
  'application/json': ['json', 'jsonb'],
  'text/plain': ['text'],
  'text/xml': ['xml'],
  'application/octet-stream': ['bytea'],
};
const UNNAMED_TYPES = new Set(['json', 'jsonb', 'text', 'xml', 'bytea']);

/**
 * Whether clients can call the function at all: every parameter named, or one unnamed
 * parameter of a type that takes a whole body. Others (e.g. `f(integer)`, or a computed field's
 * row-type parameter) cannot be named in a request.
 */
function callable(fn: DbFunction): boolean {
  if (fn.args.every((a) => a.name !== '')) return true;
  return fn.args.length === 1 && UNNAMED_TYPES.has(fn.args[0]!.type);
}

/** PostgREST's rule: required parameters all given, and nothing given that is not a parameter. */
function matchesNames(fn: DbFunction, keys: ReadonlySet<string>): boolean {
  if (fn.args.length === 0) return keys.size === 0;
  const required = fn.args.filter((a) => !a.hasDefault).map((a) => a.name);
  const names = new Set(fn.args.map((a) => a.name));
  return required.every((n) => keys.has(n)) && [...keys].every((k) => names.has(k));
}

function signature(schema: string, fn: DbFunction): string {
  return `${schema}.${fn.name}(${fn.args.map((a) => `${a.name} => ${a.type}`).join(', ')})`;
}

function ambiguous(schema: string, candidates: DbFunction[]): HttpError {
  const listed = [...candidates]
    .sort((a, b) => a.args.length - b.args.length || signature(schema, a).localeCompare(signature(schema, b)))
    .map((fn) => signature(schema, fn));
  return new HttpError(300, `Could not choose the best candidate function between: ${listed.join(', ')}`, {
    code: 'PGRST203',
    hint: 'Try renaming the parameters or the function itself in the database so function overloading can be resolved',
  });
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}

/** A close function name, or the overloads of this one, for the hint of a PGRST202. */
function suggestion(schema: Schema, name: string, candidates: DbFunction[]): string | null {
  if (candidates.length > 0) {
    const best = candidates[0]!;
    return `Perhaps you meant to call the function ${schema.name}.${best.name}(${best.args.map((a) => a.name).join(', ')})`;
  }
  let closest: { name: string; d: number } | null = null;
  for (const [other, overloads] of schema.functions) {
    if (other === name || !overloads.some(callable)) continue;
    const d = distance(name, other);
    if (d <= Math.floor(Math.max(name.length, other.length) / 3) && (!closest || d < closest.d)) {
      closest = { name: other, d };
    }
  }
  return closest ? `Perhaps you meant to call the function ${schema.name}.${closest.name}` : null;
}

function notFound(
  schema: Schema,
  name: string,
  keys: string[],
  post: boolean,
  mediaType: string,
  candidates: DbFunction[],
): HttpError {
  const fn = `${schema.name}.${name}`;
  const params =
    keys.length === 0
      ? ' without parameters'
      : ` with parameter${keys.length > 1 ? 's' : ''} ${keys.join(', ')}`;
  const single =
    mediaType === 'application/json'
      ? `${params} or with a single unnamed json/jsonb parameter`
      : ` with a single unnamed ${BODY_TYPES[mediaType]?.[0] ?? 'json'} parameter`;
  return new HttpError(
    404,
    `Could not find the function ${fn}${keys.length === 0 ? ' without parameters' : `(${keys.join(', ')})`} in the schema cache`,
    {
      code: 'PGRST202',
      details: `Searched for the function ${fn}${post ? single : params}, but no matches were found in the schema cache.`,
      hint: suggestion(schema, name, candidates),
    },
  );
}

function volatileOverGet(name: string): HttpError {
  return new HttpError(405, `${name} is volatile, so it can only be called with POST`, {
    code: 'PGRST101',
    hint: 'Declare the function STABLE or IMMUTABLE to allow GET',
  });
}

/** A table or view of the schema named like the type: its row type, filled from a JSON object. */
function isRowType(schema: Schema, type: string): boolean {
  const bare = type.replace(/^public\./, '').replace(`${schema.name}.`, '');
  return schema.tables.has(bare.replace(/^"(.*)"$/, '$1'));
}

function toDriverValue(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return null;
  if (type === 'json' || type === 'jsonb') return JSON.stringify(value);
  if (Array.isArray(value)) return type.endsWith('[]') ? value : JSON.stringify(value);
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

export interface CallRequest {
  /** named arguments: the JSON object's keys (POST) or the query's argument parameters (GET) */
  provided: Map<string, unknown>;
  /** the whole body, for a function with one unnamed parameter */
  body: unknown;
  readOnly: boolean;
  /** the body's media type (application/json unless a raw body was sent) */
  mediaType: string;
}

export function planCall(schema: Schema, name: string, call: CallRequest): FunctionCall {
  const overloads = (schema.functions.get(name) ?? []).filter(callable);
  const keys = [...call.provided.keys()];
  const keySet = new Set(keys);
  const post = !call.readOnly;
  const raw = call.body instanceof RawBody;
  const byNames = raw ? [] : overloads.filter((fn) => matchesNames(fn, keySet));
  // A function with one parameter of the body's type takes the whole body when no names match.
  const bodyTypes = BODY_TYPES[call.mediaType] ?? [];
  const byBody = post
    ? overloads.filter(
        (fn) => fn.args.length === 1 && fn.args[0]!.name === '' && bodyTypes.includes(fn.args[0]!.type),
      )
    : [];
  const chosen = byNames.length > 0 ? byNames : byBody;
  if (chosen.length === 0) {
    throw notFound(schema, name, keys, post, call.mediaType, overloads);
  }
  if (chosen.length > 1) throw ambiguous(schema.name, chosen);
  const fn = chosen[0]!;
  // GET promises no side effects; a volatile function may have some, so it is refused up front
  // rather than left to fail (or not) inside the read-only transaction.
  if (call.readOnly && fn.volatile) throw volatileOverGet(`${schema.name}.${name}`);
  if (byNames.length === 0) {
    const whole = call.body instanceof RawBody ? call.body.text : call.body;
    return { fn, args: [], wholeBody: whole };
  }
  return {
    fn,
    args: fn.args
      .filter((a) => call.provided.has(a.name))
      .map((a) => {
        const rowType = isRowType(schema, a.type);
        return {
          name: a.name,
          type: a.type,
          // A row-type argument arrives as a JSON object and is filled field by field.
          value: rowType
            ? JSON.stringify(call.provided.get(a.name) ?? null)
            : toDriverValue(call.provided.get(a.name), a.type),
          ...(rowType ? { rowType: true } : {}),
        };
      }),
  };
}
