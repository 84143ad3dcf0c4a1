// In charge of PostgREST's JSON paths (`data->a->>b`, `data->0`): parsing a field with its path,
// the key a selected path answers under, and the SQL of a path. Keys and indexes are always
// $n parameters, never SQL text; anything malformed is a 400 PGRST100.
import { HttpError } from '../http/errors.js';

export type JsonStep = { arrow: '->' | '->>'; key: string } | { arrow: '->' | '->>'; index: number };

/** One path may have at most this many steps (a fixed grammar limit, in docs/operations.md). */
export const MAX_JSON_PATH_STEPS = 16;

function pathError(message: string, raw: string): HttpError {
  return new HttpError(400, message, { code: 'PGRST100', details: raw.slice(0, 200) });
}

/** Where the first `->` outside double quotes starts, or -1. */
export function jsonPathStart(raw: string): number {
  let quoted = false;
  for (let i = 0; i < raw.length - 1; i++) {
    const ch = raw[i];
    if (quoted) {
      if (ch === '\\') i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === '-' && raw[i + 1] === '>') return i;
  }
  return -1;
}

/** Characters a bare key may not contain (PostgREST's reserved ones), besides the arrow itself. */
const RESERVED_IN_KEY = /[(),.:>]/;

/** Parses `->a->>b->0` (the part of a field from its first arrow on). */
export function parseJsonPath(raw: string): JsonStep[] {
  const steps: JsonStep[] = [];
  let i = 0;
  while (i < raw.length) {
    if (!raw.startsWith('->', i)) throw pathError(`Malformed JSON path "${raw}": expected -> or ->>`, raw);
    const arrow = raw.startsWith('->>', i) ? '->>' : '->';
    i += arrow.length;
    let operand: string;
    let quotedKey: string | undefined;
    if (raw[i] === '"') {
      let j = i + 1;
      let key = '';
      while (j < raw.length && raw[j] !== '"') {
        if (raw[j] === '\\' && j + 1 < raw.length) j++;
        key += raw[j];
        j++;
      }
      if (j >= raw.length) throw pathError(`Unterminated double quote in JSON path "${raw}"`, raw);
      quotedKey = key;
      i = j + 1;
      operand = '';
      if (i < raw.length && !raw.startsWith('->', i)) {
        throw pathError(`Malformed JSON path "${raw}": a quoted key must end the step`, raw);
      }
    } else {
      const next = raw.indexOf('->', i);
      operand = raw.slice(i, next < 0 ? raw.length : next);
      i += operand.length;
    }
    if (quotedKey !== undefined) {
      steps.push({ arrow, key: quotedKey });
    } else if (/^-?\d{1,9}$/.test(operand)) {
      steps.push({ arrow, index: Number(operand) });
    } else {
      const key = operand.trim();
      // Dashes only join words (`a-b`), as in PostgREST's grammar: `--34` is neither key nor index.
      if (key === '' || RESERVED_IN_KEY.test(key) || /^-|-$|--/.test(key)) {
        throw pathError(`Malformed JSON path "${raw}": "${operand}" is not a key or an index`, raw);
      }
      steps.push({ arrow, key });
    }
    if (steps.length > MAX_JSON_PATH_STEPS) {
      throw pathError(`A JSON path may have at most ${MAX_JSON_PATH_STEPS} steps`, raw);
    }
  }
  return steps;
}

/** The key a selected `col->…` answers under: its last key (an index falls back to the key before). */
export function jsonPathName(column: string, path: JsonStep[]): string {
  for (let i = path.length - 1; i >= 0; i--) {
    const step = path[i]!;
    if ('key' in step) return step.key;
  }
  return column;
}

/**
 * The SQL of `base` followed by the path, parenthesized so casts and operators apply to the
 * whole. A column that is not json or jsonb goes through to_jsonb(), as PostgREST does.
 */
export function jsonPathSql(
  base: string,
  columnType: string,
  path: JsonStep[],
  add: (value: unknown) => string,
): string {
  const json = columnType === 'json' || columnType === 'jsonb';
  let sql = json ? base : `to_jsonb(${base})`;
  for (const step of path) {
    sql += 'key' in step ? `${step.arrow}${add(step.key)}::text` : `${step.arrow}${add(step.index)}::int`;
  }
  return `(${sql})`;
}

/** The type a path yields: `->>` gives text, `->` json or jsonb (as the column was). */
export function jsonPathType(columnType: string, path: JsonStep[]): string {
  if (path[path.length - 1]?.arrow === '->>') return 'text';
  return columnType === 'json' ? 'json' : 'jsonb';
}
