// In charge of the SQL of one filter condition: PostgREST's operators (comparisons, patterns,
// regular expressions, quantified lists, array/range/jsonb operators, full-text search, `is`,
// `isdistinct`, `in`) applied to a column or a JSON path into it. Values are $n parameters left
// untyped where PostgREST leaves them `unknown`, so PostgreSQL reads them as the column's type
// (`{a,b}` as an array, `[1,5)` as a range, `{"a":1}` as jsonb), exactly as PostgREST's do. Pure.
import { jsonPathSql, jsonPathType } from './json-path.js';
import type { ResolvedCondition } from './plan.js';

/** Adds a value to the statement's parameters and answers its placeholder. */
export type AddParam = (value: unknown) => string;

const SQL_OPERATOR: Record<string, string> = {
  eq: '=',
  neq: '<>',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
  like: 'like',
  ilike: 'ilike',
  match: '~',
  imatch: '~*',
  cs: '@>',
  cd: '<@',
  ov: '&&',
  sl: '<<',
  sr: '>>',
  nxr: '&<',
  nxl: '&>',
  adj: '-|-',
};

const TS_QUERY: Record<string, string> = {
  fts: 'to_tsquery',
  plfts: 'plainto_tsquery',
  phfts: 'phraseto_tsquery',
  wfts: 'websearch_to_tsquery',
};

/** Operators that match text; the target is read as text so enums, numbers and paths work too. */
const TEXT_PATTERNS = new Set(['like', 'ilike', 'match', 'imatch']);

/** The column (or the JSON path into it) a condition or order term applies to, and its type. */
export function fieldSql(
  column: string,
  columnType: string,
  jsonPath: ResolvedCondition['jsonPath'],
  add: AddParam,
): { sql: string; type: string } {
  if (!jsonPath || jsonPath.length === 0) return { sql: column, type: columnType };
  return { sql: jsonPathSql(column, columnType, jsonPath, add), type: jsonPathType(columnType, jsonPath) };
}

/** `filter` on the already-quoted `column`, without its negation. */
export function operatorSql(column: string, filter: ResolvedCondition, add: AddParam): string {
  const { sql: target, type } = fieldSql(column, filter.columnInfo.type, filter.jsonPath, add);
  const value = filter.value;
  switch (filter.operator) {
    case 'is':
      return {
        null: `${target} is null`,
        not_null: `${target} is not null`,
        true: `${target} is true`,
        false: `${target} is false`,
        unknown: `${target} is unknown`,
      }[value as string]!;
    case 'isdistinct':
      return `${target} is distinct from ${add(value)}`;
    case 'in': {
      const list = value as string[];
      if (list.length === 0) return 'false';
      // An array column compares whole arrays, which one array parameter cannot carry.
      if (type.endsWith('[]')) return `${target} in (${list.map((v) => `${add(v)}::${type}`).join(', ')})`;
      // The array's element type is the column's own type, as the catalog names it.
      return `${target} = any(${add(list)}::${type}[])`;
    }
    case 'fts':
    case 'plfts':
    case 'phfts':
    case 'wfts': {
      const language = filter.language !== undefined ? `${add(filter.language)}::regconfig, ` : '';
      // A tsvector is searched as it is; anything else is turned into one first, as PostgREST does.
      const vector = type === 'tsvector' ? target : `to_tsvector(${language}${target})`;
      return `${vector} @@ ${TS_QUERY[filter.operator]}(${language}${add(value)})`;
    }
    default: {
      const op = SQL_OPERATOR[filter.operator]!;
      const pattern = filter.operator === 'like' || filter.operator === 'ilike';
      // `*` stands for `%` in like patterns (a URL-friendly wildcard), in lists too.
      const operand = pattern ? String(value).replace(/\*/g, '%') : value;
      const lhs = TEXT_PATTERNS.has(filter.operator) ? `${target}::text` : target;
      if (filter.quantifier) {
        const list = TEXT_PATTERNS.has(filter.operator) ? `${add(operand)}::text[]` : add(operand);
        return `${lhs} ${op} ${filter.quantifier}(${list})`;
      }
      return `${lhs} ${op} ${add(operand)}`;
    }
  }
}
