// In charge of the one place a value becomes SQL text instead of a parameter: statements the data
// API sends as a single simple-protocol message (no parameters there) carry their values as
// literals made here, with the driver's own conversion (pg's prepareValue, exactly what it would
// send as the parameter) and escaping (pg's escapeLiteral: quotes doubled, backslashes doubled
// inside an E'' string, so the result means the same whatever standard_conforming_strings says).
// The property tests in tests/data-api/literals.unit.test.ts hold it to "same as a parameter".
import { escapeLiteral } from 'pg';
import pgUtils from 'pg/lib/utils.js';

/** A value that cannot be written as a literal (PostgreSQL text cannot hold NUL). */
export class LiteralError extends Error {
  override name = 'LiteralError';
  /** the SQLSTATE PostgreSQL itself gives a NUL in a text parameter */
  readonly code = '22021';
  readonly severity = 'ERROR';
}

/** `value` as a SQL literal that PostgreSQL reads back as exactly the value a parameter carries. */
export function sqlLiteral(value: unknown): string {
  const prepared = pgUtils.prepareValue(value);
  if (prepared === null) return 'NULL';
  if (typeof prepared !== 'string') throw new LiteralError('Binary values are sent as parameters only');
  if (prepared.includes('\u0000')) {
    throw new LiteralError('invalid byte sequence for encoding "UTF8": 0x00');
  }
  return escapeLiteral(prepared);
}

/**
 * The statement with every `$n` placeholder replaced by the literal of values[n - 1]. Placeholders
 * are recognised only outside quoted identifiers ("…"), string literals ('…', E'…') and
 * dollar-quoted strings, so a `$1` inside a name or a default expression is left alone.
 */
export function inlineParameters(text: string, values: readonly unknown[]): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const ch = text[i]!;
    if (ch === '"' || ch === "'") {
      const escapes = ch === "'" && (text[i - 1] === 'E' || text[i - 1] === 'e') && !isWordChar(text[i - 2]);
      const end = closingQuote(text, i, ch, escapes);
      out += text.slice(i, end);
      i = end;
      continue;
    }
    if (ch === '$') {
      const digits = /^\$(\d+)/.exec(text.slice(i, i + 12));
      if (digits && !isWordChar(text[i - 1])) {
        const index = Number(digits[1]) - 1;
        if (index < 0 || index >= values.length) throw new Error(`No value for $${index + 1}`);
        out += sqlLiteral(values[index]);
        i += digits[0].length;
        continue;
      }
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(text.slice(i, i + 64));
      if (tag && !isWordChar(text[i - 1])) {
        const close = text.indexOf(tag[0], i + tag[0].length);
        const end = close < 0 ? text.length : close + tag[0].length;
        out += text.slice(i, end);
        i = end;
        continue;
      }
    }
    out += ch;
    i += 1;
  }
  return out;
}

function isWordChar(ch: string | undefined): boolean {
  return ch !== undefined && /[A-Za-z0-9_$]/.test(ch);
}

/** Index just past the quote closing the one at `start` (doubled quotes and, in E'', backslashes escape). */
function closingQuote(text: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < text.length) {
    const ch = text[i]!;
    if (backslashEscapes && ch === '\\') {
      i += 2;
      continue;
    }
    if (ch === quote) {
      if (text[i + 1] === quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i += 1;
  }
  return text.length;
}
