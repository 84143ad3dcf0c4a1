// In charge of PostgREST's URL grammar: select lists, filters (including or/and trees), order
// terms and value lists. Pure functions from strings to syntax trees; anything malformed is a
// 400 PGRST100 naming the problem. Nothing here knows the schema.
import { HttpError } from '../http/errors.js';
import { jsonPathStart, parseJsonPath, type JsonStep } from './json-path.js';

export type SelectItem =
  | { type: 'star' }
  | {
      type: 'column';
      name: string;
      alias?: string;
      cast?: string;
      jsonPath?: JsonStep[];
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

export const OPERATORS = [
  'eq',
  'neq',
  'gt',
  'gte',
  'lt',
  'lte',
  'like',
  'ilike',
  'match',
  'imatch',
  'is',
  'isdistinct',
  'in',
  'cs',
  'cd',
  'ov',
  'sl',
  'sr',
  'nxl',
  'nxr',
  'adj',
  'fts',
  'plfts',
  'phfts',
  'wfts',
] as const;
export type Operator = (typeof OPERATORS)[number];
/** Operators that take `(any)` or `(all)` and a `{a,b}` list, as PostgREST's do. */
export const QUANTIFIABLE: readonly Operator[] = [
  'eq',
  'gt',
  'gte',
  'lt',
  'lte',
  'like',
  'ilike',
  'match',
  'imatch',
];
/** Full-text operators, which take an optional text search configuration: `fts(english)`. */
export const FULL_TEXT: readonly Operator[] = ['fts', 'plfts', 'phfts', 'wfts'];

export interface Condition {
  kind: 'condition';
  /** the embed path the column belongs to ([] = the main table) */
  path: string[];
  column: string;
  /** `col->a->>b`: the JSON path into the column */
  jsonPath?: JsonStep[];
  operator: Operator;
  negate: boolean;
  /** a scalar for comparisons, a list for `in`, a keyword for `is`, `{a,b}` when quantified */
  value: string | string[];
  /** `eq(any)`, `like(all)`, … */
  quantifier?: 'any' | 'all';
  /** `fts(english)`: the text search configuration */
  language?: string;
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
  jsonPath?: JsonStep[];
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

/** A column name, bare or double-quoted, as `select` accepts it. */
export function parseColumnName(raw: string, what = 'column'): string {
  return identifier(raw, what);
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
  const [fieldRaw, cast, extra] = rest.split('::');
  if (extra !== undefined) throw syntaxError(`Malformed cast in "${raw}"`);
  const field = parseField(fieldRaw ?? '');
  return {
    type: 'column',
    name: field.column,
    ...(field.jsonPath ? { jsonPath: field.jsonPath } : {}),
    ...(alias ? { alias } : {}),
    ...(cast !== undefined ? { cast: cast.trim().toLowerCase() } : {}),
  };
}

/** A column with an optional JSON path: `data`, `data->a->>b`, `"odd name"->0`. */
export function parseField(raw: string): { column: string; jsonPath?: JsonStep[] } {
  const arrow = jsonPathStart(raw);
  if (arrow < 0) return { column: identifier(raw, 'column') };
  return {
    column: identifier(raw.slice(0, arrow), 'column'),
    jsonPath: parseJsonPath(raw.slice(arrow).trim()),
  };
}

/**
 * Walks `s` from `from`, stepping over double-quoted stretches (with backslash escapes) and
 * counting parentheses; answers the first index outside quotes where `stop` holds for the
 * character and the depth before it, or -1, saying whether a quote was left open.
 */
function scanOutsideQuotes(
  s: string,
  from: number,
  stop: (ch: string, depth: number) => boolean,
): { at: number; unterminated: boolean } {
  let depth = 0;
  let quoted = false;
  for (let i = from; i < s.length; i++) {
    const ch = s[i]!;
    if (quoted) {
      if (ch === '\\') i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if (stop(ch, depth)) return { at: i, unterminated: false };
    else if (ch === '(') depth++;
    else if (ch === ')') depth--;
  }
  return { at: -1, unterminated: quoted };
}

/** Where the field at the start of `raw` ends: the first `.` outside double quotes. */
function fieldEnd(raw: string, from = 0): number {
  return scanOutsideQuotes(raw, from, (ch) => ch === '.').at;
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

/** `fts(english)` languages: a text search configuration's name, as PostgREST's grammar allows. */
const LANGUAGE = /^[A-Za-z0-9_$ ]{1,63}$/;

function unknownOperator(operator: string): HttpError {
  return syntaxError(`Unknown operator "${operator.slice(0, 64)}"`, `Supported: ${OPERATORS.join(', ')}`);
}

/** Parses `[not.]op[(modifier)].value` for a column; `value` is taken verbatim unless `inLogic`. */
export function parseOperation(
  path: string[],
  column: string,
  raw: string,
  inLogic = false,
  jsonPath?: JsonStep[],
): Condition {
  let rest = raw;
  let negate = false;
  if (rest.startsWith('not.')) {
    negate = true;
    rest = rest.slice(4);
  }
  const dot = rest.indexOf('.');
  if (dot < 0) throw syntaxError(`Filter "${raw}" on "${column}" needs an operator and a value, like eq.5`);
  const token = /^([a-z]+)(?:\((.*)\))?$/s.exec(rest.slice(0, dot));
  if (!token) throw unknownOperator(rest.slice(0, dot));
  const operator = token[1]!;
  const modifier = token[2];
  const value = rest.slice(dot + 1);
  if (!(OPERATORS as readonly string[]).includes(operator)) throw unknownOperator(operator);
  const op = operator as Operator;
  const base = {
    kind: 'condition' as const,
    path,
    column,
    ...(jsonPath ? { jsonPath } : {}),
    operator: op,
    negate,
  };
  let extra: Pick<Condition, 'quantifier' | 'language'> = {};
  if (modifier !== undefined) {
    if (QUANTIFIABLE.includes(op)) {
      if (modifier !== 'any' && modifier !== 'all') {
        throw syntaxError(`"${op}" takes (any) or (all), not (${modifier})`);
      }
      extra = { quantifier: modifier };
    } else if (FULL_TEXT.includes(op)) {
      const language = modifier.trim();
      if (!LANGUAGE.test(language)) {
        throw syntaxError(`"${modifier}" is not a text search configuration name`, 'Use e.g. fts(english)');
      }
      extra = { language };
    } else {
      throw syntaxError(`"${op}" takes no modifier in parentheses`, `Found (${modifier})`);
    }
  }
  if (op === 'is') {
    const keyword = value.toLowerCase();
    if (!IS_VALUES.includes(keyword)) throw syntaxError(`"is" takes one of ${IS_VALUES.join(', ')}`);
    return { ...base, value: keyword };
  }
  if (op === 'in') return { ...base, value: parseList(value) };
  return { ...base, ...extra, value: inLogic ? unquoteValue(value) : value };
}

/** Where a value inside an or/and list ends: at `,` or `)` outside quotes, braces and parentheses. */
function logicValueEnd(s: string, from: number): number {
  if (s[from] === '{') {
    // A PostgreSQL array literal `{a,b}` is one value, commas included.
    const close = s.indexOf('}', from);
    if (close < 0) throw syntaxError('Unbalanced braces in a value', s);
    return close + 1;
  }
  const end = scanOutsideQuotes(s, from, (ch, depth) => depth === 0 && (ch === ')' || ch === ','));
  if (end.unterminated) throw syntaxError('Unterminated double quote', s);
  return end.at < 0 ? s.length : end.at;
}

/** A nested tree inside an or/and list: `and(`, `not.or (`, … (spaces allowed before the parenthesis). */
const NESTED_LOGIC = /(not\.)?(and|or) *\(/y;

/** Parses one `(…)` list of an or/and tree starting at `s[from]`; returns the items and where it ended. */
function parseLogicList(
  kind: 'and' | 'or',
  s: string,
  from: number,
  path: string[],
  depth: number,
): { items: FilterNode[]; next: number } {
  if (depth > MAX_DEPTH) throw syntaxError('Logic filters are nested too deeply');
  if (s[from] !== '(') {
    throw syntaxError(`"${kind}" needs its conditions in parentheses: ${kind}=(a.eq.1,b.eq.2)`);
  }
  const items: FilterNode[] = [];
  let i = from + 1;
  for (;;) {
    while (s[i] === ' ') i++;
    NESTED_LOGIC.lastIndex = i;
    const nested = NESTED_LOGIC.exec(s);
    if (nested) {
      const inner = parseLogicList(nested[2] as 'and' | 'or', s, i + nested[0].length - 1, path, depth + 1);
      if (inner.items.length === 0) throw syntaxError(`Empty ${nested[2]} filter`);
      items.push({ kind: nested[2] as 'and' | 'or', negate: Boolean(nested[1]), path, items: inner.items });
      i = inner.next;
    } else {
      const dot = fieldEnd(s, i);
      // Scanned in place, so a long list costs time linear in its length.
      let stop = -1;
      for (let j = i; j < (dot < 0 ? s.length : dot) && stop < 0; j++)
        if (s[j] === ',' || s[j] === ')') stop = j;
      if (dot < 0 || stop >= 0) {
        const item = s.slice(i, stop < 0 ? s.length : stop);
        if (item.trim() === '' && s[i] === ')' && items.length === 0)
          throw syntaxError(`Empty ${kind} filter`);
        throw syntaxError(`Malformed condition "${item}" in ${kind}`);
      }
      const field = parseField(s.slice(i, dot));
      // The operator part (`not.`, `fts(english)`, `eq(any)`) ends at the dot before the value.
      let opEnd = s.indexOf('.', dot + 1);
      if (opEnd >= 0 && s.slice(dot + 1, opEnd) === 'not') opEnd = s.indexOf('.', opEnd + 1);
      if (opEnd < 0) throw syntaxError(`Malformed condition "${s.slice(i)}" in ${kind}`);
      const isList = /^(not\.)?in$/.test(s.slice(dot + 1, opEnd));
      let end: number;
      if (isList) {
        const close = s[opEnd + 1] === '(' ? matchingParenthesis(s, opEnd + 1) : -1;
        end = close < 0 ? logicValueEnd(s, opEnd + 1) : close + 1;
      } else {
        end = logicValueEnd(s, opEnd + 1);
      }
      items.push(parseOperation(path, field.column, s.slice(dot + 1, end), true, field.jsonPath));
      i = end;
    }
    while (s[i] === ' ') i++;
    if (s[i] === ',') {
      i++;
      continue;
    }
    if (s[i] === ')') return { items, next: i + 1 };
    throw syntaxError(`Unbalanced parentheses in ${kind}`, s);
  }
}

/** The index of the `)` closing the `(` at `from`, respecting double quotes; -1 if none. */
function matchingParenthesis(s: string, from: number): number {
  const end = scanOutsideQuotes(s, from, (ch, depth) => ch === ')' && depth === 1);
  if (end.unterminated) throw syntaxError('Unterminated double quote', s);
  return end.at;
}

/** Parses the `(a.eq.1,b.gt.2,or(...))` body of an or/and filter. */
export function parseLogic(
  kind: 'and' | 'or',
  negate: boolean,
  path: string[],
  raw: string,
  depth = 0,
): Logic {
  const { items, next } = parseLogicList(kind, raw, 0, path, depth);
  if (next !== raw.length) throw syntaxError(`Unbalanced parentheses in ${kind}`, raw);
  if (items.length === 0) throw syntaxError(`Empty ${kind} filter`);
  return { kind, negate, path, items };
}

/** A query parameter that is a filter: `col`, `col->a->>b`, `rel.col`, `or`, `not.or`, `rel.or`, … */
export function parseFilterParam(key: string, value: string): FilterNode {
  const arrow = jsonPathStart(key);
  const head = arrow < 0 ? key : key.slice(0, arrow);
  const segments = head.split('.');
  const last = segments[segments.length - 1]!;
  if (arrow < 0 && (last === 'or' || last === 'and')) {
    const negate = segments[segments.length - 2] === 'not';
    const path = segments.slice(0, negate ? -2 : -1).map((s) => identifier(s, 'relation'));
    if (path.length > 1) throw syntaxError(`Only one level of embedding is supported: ${key}`);
    return parseLogic(last, negate, path, value);
  }
  const path = segments.slice(0, -1).map((s) => identifier(s, 'relation'));
  if (path.length > 1) throw syntaxError(`Only one level of embedding is supported: ${key}`);
  const field = parseField(arrow < 0 ? last : last + key.slice(arrow));
  return parseOperation(path, field.column, value, false, field.jsonPath);
}

// ------------------------------------------------------------------------------------- order

export function parseOrder(raw: string, path: string[] = []): OrderTerm[] {
  return splitTopLevel(raw).map((part) => {
    const trimmed = part.trim();
    // `rel(col)`: a column of a to-one embedded resource.
    const related = /^([^()."]+)\(([^()]+)\)(\..*)?$/.exec(trimmed);
    let fieldText: string;
    let rest: string;
    if (related) {
      fieldText = related[2]!;
      rest = related[3] ?? '';
    } else {
      const dot = fieldEnd(trimmed);
      fieldText = dot < 0 ? trimmed : trimmed.slice(0, dot);
      rest = dot < 0 ? '' : trimmed.slice(dot);
    }
    const field = parseField(fieldText);
    const term: OrderTerm = {
      path,
      column: field.column,
      ...(field.jsonPath ? { jsonPath: field.jsonPath } : {}),
      descending: false,
    };
    if (related) term.relation = identifier(related[1]!, 'relation');
    for (const modifier of rest ? rest.slice(1).split('.') : []) {
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
