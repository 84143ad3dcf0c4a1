// In charge of the text side of the built-in SQL prompt: whether what has been typed ends a
// statement (a `;` outside quotes, comments and dollar quotes), and results as aligned tables.
import type { FieldDef, QueryResult } from 'pg';

/** True when the text's last meaningful character is a `;` that ends a statement. */
export function endsStatement(text: string): boolean {
  let last = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    const next = text[i + 1];
    if (ch === '-' && next === '-') {
      const end = text.indexOf('\n', i);
      if (end < 0) return last === ';';
      i = end + 1;
    } else if (ch === '/' && next === '*') {
      let depth = 1;
      i += 2;
      while (i < text.length && depth > 0) {
        const pair = text.slice(i, i + 2);
        if (pair === '/*' || pair === '*/') {
          depth += pair === '/*' ? 1 : -1;
          i += 2;
        } else i += 1;
      }
      if (depth > 0) return false;
    } else if (ch === "'" || ch === '"') {
      // E'…' strings take backslash escapes; a doubled quote is a quote in every kind.
      const escapes = ch === "'" && /[eE]/.test(text[i - 1] ?? '') && !/\w/.test(text[i - 2] ?? '');
      i += 1;
      let closed = false;
      while (i < text.length) {
        if (escapes && text[i] === '\\') i += 2;
        else if (text[i] === ch && text[i + 1] === ch) i += 2;
        else if (text[i] === ch) {
          closed = true;
          i += 1;
          break;
        } else i += 1;
      }
      if (!closed) return false;
      last = ch;
    } else if (ch === '$' && !/[\w$]/.test(text[i - 1] ?? '')) {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i));
      if (tag) {
        const end = text.indexOf(tag[0], i + tag[0].length);
        if (end < 0) return false;
        i = end + tag[0].length;
        last = '$';
      } else {
        last = ch;
        i += 1;
      }
    } else {
      if (!/\s/.test(ch)) last = ch;
      i += 1;
    }
  }
  return last === ';';
}

// Type OIDs of numbers, which read best right-aligned, as psql shows them.
const NUMERIC_TYPES = new Set([20, 21, 23, 26, 700, 701, 790, 1700]);

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** One result as psql prints it: a table with a row count, or the command's tag. */
export function formatResult(result: Pick<QueryResult, 'command' | 'rowCount' | 'fields' | 'rows'>): string {
  if (result.fields.length === 0) {
    return result.rowCount === null ? result.command : `${result.command} ${result.rowCount}`;
  }
  const fields: FieldDef[] = result.fields;
  const rows = (result.rows as unknown[][]).map((row) => row.map(cell));
  const widths = fields.map((f, c) => Math.max(f.name.length, ...rows.map((r) => r[c]!.length)));
  const numeric = fields.map((f) => NUMERIC_TYPES.has(f.dataTypeID));
  const header = fields.map((f, c) => {
    const pad = widths[c]! - f.name.length;
    return ' '.repeat(Math.floor(pad / 2)) + f.name + ' '.repeat(Math.ceil(pad / 2));
  });
  const lines = [
    ` ${header.join(' | ')} `,
    fields.map((_, c) => '-'.repeat(widths[c]! + 2)).join('+'),
    ...rows.map((r) =>
      ` ${r.map((v, c) => (numeric[c] ? v.padStart(widths[c]!) : v.padEnd(widths[c]!))).join(' | ')} `.trimEnd(),
    ),
    `(${rows.length} ${rows.length === 1 ? 'row' : 'rows'})`,
    '',
  ];
  return lines.join('\n');
}
