// In charge of postgres_changes filters as realtime-js writes them (its postgresChangesFilter()
// builder and hand-written strings): `column=[not.]op.value`, comma as AND (commas inside `in.(…)`
// or a double-quoted value do not split), PostgREST quoting, and the operators eq, neq, lt, lte,
// gt, gte, in, like, ilike, is, match, imatch, isdistinct. Pure: parsing against a table's
// columns, and judging a row (its JSON as the trigger captured it) by the column's type.

export const FILTER_OPERATORS = [
  'eq',
  'neq',
  'lt',
  'lte',
  'gt',
  'gte',
  'in',
  'like',
  'ilike',
  'is',
  'match',
  'imatch',
  'isdistinct',
] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

export interface Condition {
  column: string;
  negate: boolean;
  op: FilterOperator;
  /** the value as written (unquoted); a list for `in`; for `is`: null, true, false or unknown */
  value: string | string[];
  /** the value ready to compare, by the column's type */
  compiled: Compiled;
}

type Scalar = number | string | boolean;
type Compiled =
  | { kind: 'scalar'; value: Scalar | null }
  | { kind: 'list'; values: Scalar[] }
  | { kind: 'pattern'; regex: RegExp }
  | { kind: 'is'; value: null | boolean | 'unknown' };

export class FilterError extends Error {
  override name = 'FilterError';
}

const NUMERIC_TYPES = new Set(['int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'oid']);
const TIME_TYPES = new Set(['timestamptz', 'timestamp', 'date']);

/** Splits at commas outside parentheses and double quotes. */
export function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let current = '';
  for (let i = 0; i < text.length; i += 1) {
    const ch = text[i]!;
    if (quoted) {
      current += ch;
      if (ch === '\\' && i + 1 < text.length) current += text[(i += 1)]!;
      else if (ch === '"') quoted = false;
      continue;
    }
    if (ch === '"') quoted = true;
    else if (ch === '(') depth += 1;
    else if (ch === ')') depth = Math.max(0, depth - 1);
    else if (ch === ',' && depth === 0) {
      parts.push(current);
      current = '';
      continue;
    }
    current += ch;
  }
  if (quoted) throw new FilterError('an unterminated double quote');
  parts.push(current);
  return parts;
}

/** A value as PostgREST reads it: "double quoted" with backslash escapes, or as it stands. */
function unquote(raw: string): string {
  const text = raw;
  if (text.length >= 2 && text.startsWith('"') && text.endsWith('"')) {
    return text.slice(1, -1).replace(/\\(.)/g, '$1');
  }
  return text;
}

function likeToRegex(pattern: string, insensitive: boolean): RegExp {
  let source = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) source += escapeRegex(pattern[(i += 1)]!);
    else if (ch === '%') source += '[\\s\\S]*';
    else if (ch === '_') source += '[\\s\\S]';
    else source += escapeRegex(ch);
  }
  return new RegExp(`^${source}$`, insensitive ? 'iu' : 'u');
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** A written value as the column's type compares it; throws for one the type cannot hold. */
function scalarFor(value: string, type: string, column: string): Scalar {
  if (NUMERIC_TYPES.has(type)) {
    const number = Number(value);
    if (value.trim() === '' || !Number.isFinite(number)) {
      throw new FilterError(`invalid input syntax for type ${type} on column ${column}: "${value}"`);
    }
    return number;
  }
  if (type === 'bool') {
    const lower = value.toLowerCase();
    if (['t', 'true', 'yes', 'on', '1'].includes(lower)) return true;
    if (['f', 'false', 'no', 'off', '0'].includes(lower)) return false;
    throw new FilterError(`invalid input syntax for type boolean on column ${column}: "${value}"`);
  }
  if (type === 'uuid') {
    if (!/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i.test(value)) {
      throw new FilterError(`invalid input syntax for type uuid on column ${column}: "${value}"`);
    }
    return value.toLowerCase().replace(/-/g, '');
  }
  if (TIME_TYPES.has(type)) {
    const time = Date.parse(value);
    if (Number.isNaN(time)) {
      throw new FilterError(`invalid input syntax for type ${type} on column ${column}: "${value}"`);
    }
    return time;
  }
  return value;
}

/** A row's JSON value as the same type compares it; null when absent or SQL null. */
function rowScalar(value: unknown, type: string): Scalar | null {
  if (value === null || value === undefined) return null;
  if (NUMERIC_TYPES.has(type)) return typeof value === 'number' ? value : Number(value);
  if (type === 'bool') return value === true || value === 't' || value === 'true';
  if (type === 'uuid') return String(value).toLowerCase().replace(/-/g, '');
  if (TIME_TYPES.has(type)) return Date.parse(String(value));
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * Parses a binding's filter against the table's columns (name -> pg type name). An empty or
 * blank filter is no filter. Throws FilterError with the reason for anything else it cannot read.
 */
export function parseFilter(filter: string | undefined, columns: ReadonlyMap<string, string>): Condition[] {
  if (filter === undefined || filter.trim() === '') return [];
  const conditions: Condition[] = [];
  for (const part of splitTopLevel(filter)) {
    const text = part.trim();
    const eq = text.indexOf('=');
    if (eq <= 0) throw new FilterError(`"${text}" is not column=operator.value`);
    const column = text.slice(0, eq).trim();
    let rest = text.slice(eq + 1);
    const type = columns.get(column);
    if (type === undefined) throw new FilterError(`column ${column} does not exist`);
    let negate = false;
    if (rest.startsWith('not.')) {
      negate = true;
      rest = rest.slice(4);
    }
    const dot = rest.indexOf('.');
    const op = (dot < 0 ? rest : rest.slice(0, dot)) as FilterOperator;
    if (!FILTER_OPERATORS.includes(op)) throw new FilterError(`unknown operator "${op}"`);
    if (dot < 0) throw new FilterError(`operator ${op} needs a value`);
    const raw = rest.slice(dot + 1);
    conditions.push(compile(column, type, negate, op, raw));
  }
  return conditions;
}

function compile(column: string, type: string, negate: boolean, op: FilterOperator, raw: string): Condition {
  switch (op) {
    case 'in': {
      if (!raw.startsWith('(') || !raw.endsWith(')')) throw new FilterError('in needs a list: in.(a,b)');
      const values = splitTopLevel(raw.slice(1, -1)).map((v) => unquote(v.trim()));
      if (values.length > 100) throw new FilterError('in takes at most 100 values');
      return {
        column,
        negate,
        op,
        value: values,
        compiled: { kind: 'list', values: values.map((v) => scalarFor(v, type, column)) },
      };
    }
    case 'is': {
      const lower = raw.toLowerCase();
      const value = lower === 'null' ? null : lower === 'true' ? true : lower === 'false' ? false : lower;
      if (value !== null && value !== true && value !== false && value !== 'unknown') {
        throw new FilterError('is takes null, true, false or unknown');
      }
      return { column, negate, op, value: raw, compiled: { kind: 'is', value } };
    }
    case 'like':
    case 'ilike':
    case 'match':
    case 'imatch': {
      const value = unquote(raw);
      let regex: RegExp;
      try {
        regex =
          op === 'like' || op === 'ilike'
            ? likeToRegex(value, op === 'ilike')
            : new RegExp(value, op === 'imatch' ? 'iu' : 'u');
      } catch {
        throw new FilterError(`invalid regular expression "${value}"`);
      }
      return { column, negate, op, value, compiled: { kind: 'pattern', regex } };
    }
    default: {
      const value = unquote(raw);
      // `isdistinct.null` is IS DISTINCT FROM NULL: the one comparison with null that answers.
      if (op === 'isdistinct' && raw === 'null') {
        return { column, negate, op, value, compiled: { kind: 'scalar', value: null } };
      }
      return {
        column,
        negate,
        op,
        value,
        compiled: { kind: 'scalar', value: scalarFor(value, type, column) },
      };
    }
  }
}

/**
 * Whether a row passes every condition, with SQL's rules: a comparison with null is unknown and
 * does not pass, negated or not; `is` and `isdistinct` are the null-safe ones.
 */
export function passes(
  conditions: readonly Condition[],
  row: Record<string, unknown>,
  columns: ReadonlyMap<string, string>,
): boolean {
  for (const condition of conditions) {
    const type = columns.get(condition.column) ?? 'text';
    const value = rowScalar(row[condition.column], type);
    const result = judge(condition, value);
    if (result === null) return false;
    if (condition.negate ? result : !result) return false;
  }
  return true;
}

function judge(condition: Condition, value: Scalar | null): boolean | null {
  const { compiled } = condition;
  switch (compiled.kind) {
    case 'is':
      if (compiled.value === null || compiled.value === 'unknown') return value === null;
      return value === compiled.value;
    case 'list':
      if (value === null) return null;
      return compiled.values.includes(value);
    case 'pattern':
      if (value === null) return null;
      return compiled.regex.test(String(value));
    case 'scalar': {
      const target = compiled.value;
      if (condition.op === 'isdistinct') return value !== target;
      if (value === null || target === null) return null;
      switch (condition.op) {
        case 'eq':
          return value === target;
        case 'neq':
          return value !== target;
        case 'lt':
          return value < target;
        case 'lte':
          return value <= target;
        case 'gt':
          return value > target;
        case 'gte':
          return value >= target;
        default:
          return null;
      }
    }
  }
}

/** A binding's `select`: a list of column names (or one comma-separated string); null for none. */
export function parseSelect(select: unknown, columns: ReadonlyMap<string, string>): string[] | null {
  if (select === undefined || select === null) return null;
  const list =
    typeof select === 'string'
      ? select.split(',').map((c) => c.trim())
      : Array.isArray(select) && select.every((c) => typeof c === 'string')
        ? (select as string[]).map((c) => c.trim())
        : null;
  if (list === null) throw new FilterError('select must be a list of column names');
  const named = list.filter((c) => c !== '');
  if (named.length === 0) return null;
  for (const column of named) {
    if (!columns.has(column)) throw new FilterError(`column ${column} does not exist`);
  }
  return named;
}
