// In charge of PostgREST's URL grammar: select lists, filters (including or/and trees), order
// terms and value lists. Pure functions from strings to syntax trees; anything malformed is a
// 400 PGRST100 naming the problem. Nothing here knows the schema.
import { HttpError } from '../http/errors.js';

export type SelectItem =
  | { type: 'star' }
  | {
      type: 'column';
      name: string;
      alias?: string;
      cast?: string;
      /** `col.sum()`: an aggregate over the column, grouped by the other selected columns */
      aggregate?: AggregateFunction;
      /** `col.sum()::text`: a cast of the aggregate's result */
      aggregateCast?: string;
    }
  /** `count()`: the number of rows in each group */
  | { type: 'count'; alias?: string; cast?: string }
  | {
      type: 'embed';
      relation: string;
      alias?: string;
      hint?: string;
      inner: boolean;
      /** `...rel(cols)`: the embedded columns are merged into the parent object */
      spread?: boolean;
      items: SelectItem[];
    };

export const AGGREGATE_FUNCTIONS = ['count', 'sum', 'avg', 'min', 'max'] as const;
export type AggregateFunction = (typeof AGGREGATE_FUNCTIONS)[number];

export const OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'is', 'in'] as const;
export type Operator = (typeof OPERATORS)[number];

export interface Condition {
  kind: 'condition';
  /** the embed path the column belongs to ([] = the main table) */
  path: string[];
  column: string;
  operator: Operator;
  negate: boolean;
  /** a scalar for comparisons, a list for `in`, a keyword for `is` */
  value: string | string[];
}

export interface Logic {
  kind: 'and' | 'or';
  negate: boolean;
  path: string[];
  items: FilterNode[];
}

export type FilterNode = Condition | Logic;

export interface OrderTerm {
  path: string[];
  /** `order=rel(col)`: ordering by a column of a to-one embedded resource */
  relation?: string;
  column: string;
  descending: boolean;
  nulls?: 'first' | 'last';
}

const MAX_DEPTH = 8;
export const MAX_EMBED_DEPTH = 3;
/**
 * Nesting the parser accepts; the planner holds embeds to MAX_EMBED_DEPTH after resolving each
 * level, so a missing relationship is reported (PGRST200) before the depth is.
 */
const MAX_PARSE_DEPTH = 16;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_$]*$/;
const IS_VALUES = ['null', 'not_null', 'true', 'false', 'unknown'];

export function syntaxError(message: string, details?: string): HttpError {
  return new HttpError(400, message, { code: 'PGRST100', details: details ?? null });
}

/** Characters no name may contain: PostgreSQL's protocol cannot carry NUL, and none belongs in a name. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

function identifier(raw: string, what: string): string {
  const name = raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2 ? unquote(raw) : raw.trim();
  if (CONTROL_CHARACTERS.test(name)) {
    throw syntaxError(
      `A ${what} name may not contain control characters`,
      JSON.stringify(name).slice(0, 200),
    );
  }
  if (name === '' || name.length > 63 || (!raw.startsWith('"') && !IDENTIFIER.test(name))) {
    throw syntaxError(`"${raw}" is not a valid ${what} name`);
  }
  return name;
}

function unquote(raw: string): string {
  return raw.slice(1, -1).replace(/\\(.)/g, '$1');
}

/** Splits on `separator` at parenthesis depth 0, respecting double quotes. */
export function splitTopLevel(input: string, separator = ','): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let current = '';
  for (let i = 0; i < input.length; i++) {
    const ch = input[i]!;
    if (quoted) {
      current += ch;
      if (ch === '\\' && i + 1 < input.length) current += input[++i];
      else if (ch === '"') quoted = false;
      continue;
    }
    if (ch === '"') quoted = true;
    else if (ch === '(') depth++;
    else if (ch === ')') {
      depth--;
      if (depth < 0) throw syntaxError('Unbalanced parentheses', input);
    } else if (ch === separator && depth === 0) {
      parts.push(current);
      current = '';
      continue;
    }
    current += ch;
  }
  if (quoted) throw syntaxError('Unterminated double quote', input);
  if (depth !== 0) throw syntaxError('Unbalanced parentheses', input);
  parts.push(current);
  return parts;
}

// ------------------------------------------------------------------------------------ select

export function parseSelect(input: string | undefined, depth = 0): SelectItem[] {
  if (input === undefined || input.trim() === '') return [{ type: 'star' }];
  if (depth > MAX_PARSE_DEPTH) throw syntaxError(`Embedding is limited to ${MAX_EMBED_DEPTH} levels`, input);
  return splitTopLevel(input).map((raw) => parseSelectItem(raw.trim(), depth));
}

function parseSelectItem(raw: string, depth: number): SelectItem {
  if (raw === '') throw syntaxError('Empty item in select');
  if (raw === '*') return { type: 'star' };
  let alias: string | undefined;
  let rest = raw;
  const aliasMatch = /^("(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_$]*):(?!:)/.exec(raw);
  if (aliasMatch) {
    alias = identifier(aliasMatch[1]!, 'alias');
    rest = raw.slice(aliasMatch[0].length);
  }
  const aggregate = parseAggregate(rest, alias);
  if (aggregate) return aggregate;
  let spread = false;
  if (rest.startsWith('...')) {
    spread = true;
    rest = rest.slice(3);
  }
  const open = rest.indexOf('(');
  if (spread && open < 0) throw syntaxError(`Only embedded resources can be spread: "${raw}"`);
  if (open >= 0) {
    if (!rest.endsWith(')')) throw syntaxError(`Malformed embedded resource "${raw}"`);
    const head = rest.slice(0, open);
    const inner = rest.slice(open + 1, -1);
    const [relationRaw, ...modifiers] = head.split('!');
    let innerJoin = false;
    let hint: string | undefined;
    for (const modifier of modifiers) {
      if (modifier === 'inner') innerJoin = true;
      else if (modifier === 'left') innerJoin = false;
      else if (hint === undefined) hint = identifier(modifier, 'relationship hint');
      else throw syntaxError(`Too many modifiers in "${head}"`);
    }
    return {
      type: 'embed',
      relation: identifier(relationRaw ?? '', 'relation'),
      ...(alias ? { alias } : {}),
      ...(hint ? { hint } : {}),
      inner: innerJoin,
      ...(spread ? { spread } : {}),
      // `rel()` selects nothing: the embed is there only to filter on (rel=not.is.null, !inner).
      items: inner.trim() === '' ? [] : parseSelect(inner, depth + 1),
    };
  }
  if (rest.includes('->')) throw syntaxError('JSON paths in select are not supported', raw);
  const [nameRaw, cast, extra] = rest.split('::');
  if (extra !== undefined) throw syntaxError(`Malformed cast in "${raw}"`);
  return {
    type: 'column',
    name: identifier(nameRaw ?? '', 'column'),
    ...(alias ? { alias } : {}),
    ...(cast !== undefined ? { cast: cast.trim().toLowerCase() } : {}),
  };
}

const AGGREGATE = /^(?:(.+?)\.)?(count|sum|avg|min|max)\(\)(?:::([A-Za-z_][A-Za-z0-9_ ]*))?$/;

/** `count()`, `col.sum()`, `col::int.max()::text`: null when the item is no aggregate. */
function parseAggregate(rest: string, alias: string | undefined): SelectItem | null {
  const match = AGGREGATE.exec(rest);
  if (!match) return null;
  const [, target, fn, resultCast] = match;
  const cast = resultCast !== undefined ? { cast: resultCast.trim().toLowerCase() } : {};
  if (target === undefined) {
    if (fn !== 'count') throw syntaxError(`${fn}() needs a column, like amount.${fn}()`, rest);
    return { type: 'count', ...(alias ? { alias } : {}), ...cast };
  }
  const [nameRaw, inputCast, extra] = target.split('::');
  if (extra !== undefined) throw syntaxError(`Malformed cast in "${rest}"`);
  return {
    type: 'column',
    name: identifier(nameRaw ?? '', 'column'),
    ...(alias ? { alias } : {}),
    ...(inputCast !== undefined ? { cast: inputCast.trim().toLowerCase() } : {}),
    aggregate: fn as AggregateFunction,
    ...(resultCast !== undefined ? { aggregateCast: resultCast.trim().toLowerCase() } : {}),
  };
}

// ----------------------------------------------------------------------------------- filters

/** `in.(a,"b,c")` value lists. */
export function parseList(raw: string): string[] {
  if (!raw.startsWith('(') || !raw.endsWith(')'))
    throw syntaxError(`"in" needs a list in parentheses: ${raw}`);
  const body = raw.slice(1, -1);
  if (body.trim() === '') return [];
  return splitTopLevel(body).map((item) => {
    const trimmed = item.trim();
    return trimmed.startsWith('"') && trimmed.endsWith('"') && trimmed.length >= 2
      ? unquote(trimmed)
      : trimmed;
  });
}

function unquoteValue(raw: string): string {
  return raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2 ? unquote(raw) : raw;
}

/** Parses `[not.]op.value` for a column. */
export function parseOperation(path: string[], column: string, raw: string, inLogic = false): Condition {
  let rest = raw;
  let negate = false;
  if (rest.startsWith('not.')) {
    negate = true;
    rest = rest.slice(4);
  }
  const dot = rest.indexOf('.');
  if (dot < 0) throw syntaxError(`Filter "${raw}" on "${column}" needs an operator and a value, like eq.5`);
  const operator = rest.slice(0, dot);
  const value = rest.slice(dot + 1);
  if (!(OPERATORS as readonly string[]).includes(operator)) {
    throw syntaxError(`Unknown operator "${operator}"`, `Supported: ${OPERATORS.join(', ')}`);
  }
  const op = operator as Operator;
  if (op === 'is') {
    if (!IS_VALUES.includes(value)) throw syntaxError(`"is" takes one of ${IS_VALUES.join(', ')}`);
    return { kind: 'condition', path, column, operator: op, negate, value };
  }
  if (op === 'in') return { kind: 'condition', path, column, operator: op, negate, value: parseList(value) };
  return {
    kind: 'condition',
    path,
    column,
    operator: op,
    negate,
    value: inLogic ? unquoteValue(value) : value,
  };
}

/** Parses the `(a.eq.1,b.gt.2,or(...))` body of an or/and filter. */
export function parseLogic(
  kind: 'and' | 'or',
  negate: boolean,
  path: string[],
  raw: string,
  depth = 0,
): Logic {
  if (depth > MAX_DEPTH) throw syntaxError('Logic filters are nested too deeply');
  if (!raw.startsWith('(') || !raw.endsWith(')')) {
    throw syntaxError(`"${kind}" needs its conditions in parentheses: ${kind}=(a.eq.1,b.eq.2)`);
  }
  const items = splitTopLevel(raw.slice(1, -1)).map((part): FilterNode => {
    const item = part.trim();
    const nested = /^(not\.)?(and|or)(\(.*\))$/s.exec(item);
    if (nested) return parseLogic(nested[2] as 'and' | 'or', Boolean(nested[1]), path, nested[3]!, depth + 1);
    const dot = item.indexOf('.');
    if (dot <= 0) throw syntaxError(`Malformed condition "${item}" in ${kind}`);
    const column = identifier(item.slice(0, dot), 'column');
    return parseOperation(path, column, item.slice(dot + 1), true);
  });
  if (items.length === 0) throw syntaxError(`Empty ${kind} filter`);
  return { kind, negate, path, items };
}

/** A query parameter that is a filter: `col`, `rel.col`, `or`, `not.or`, `rel.or`, … */
export function parseFilterParam(key: string, value: string): FilterNode {
  const segments = key.split('.');
  const negated =
    segments[0] === 'not' && segments.length === 2 && (segments[1] === 'or' || segments[1] === 'and');
  if (negated) return parseLogic(segments[1] as 'and' | 'or', true, [], value);
  const last = segments[segments.length - 1]!;
  const path = segments.slice(0, -1).map((s) => identifier(s, 'relation'));
  if (path.length > 1) throw syntaxError(`Only one level of embedding is supported: ${key}`);
  if (last === 'or' || last === 'and') return parseLogic(last, false, path, value);
  return parseOperation(path, identifier(last, 'column'), value);
}

// ------------------------------------------------------------------------------------- order

export function parseOrder(raw: string, path: string[] = []): OrderTerm[] {
  return splitTopLevel(raw).map((part) => {
    const pieces = part.trim().split('.');
    // `rel(col)`: a column of a to-one embedded resource.
    const related = /^([^()]+)\(([^()]+)\)$/.exec(pieces[0] ?? '');
    const column = identifier(related ? related[2]! : (pieces[0] ?? ''), 'column');
    const term: OrderTerm = { path, column, descending: false };
    if (related) term.relation = identifier(related[1]!, 'relation');
    for (const modifier of pieces.slice(1)) {
      if (modifier === 'asc') term.descending = false;
      else if (modifier === 'desc') term.descending = true;
      else if (modifier === 'nullsfirst') term.nulls = 'first';
      else if (modifier === 'nullslast') term.nulls = 'last';
      else
        throw syntaxError(`Unknown order modifier "${modifier}"`, 'Use asc, desc, nullsfirst or nullslast');
    }
    return term;
  });
}

export function parseNonNegativeInteger(raw: string, what: string): number {
  if (!/^\d{1,9}$/.test(raw)) throw syntaxError(`${what} must be a non-negative integer`);
  return Number(raw);
}
