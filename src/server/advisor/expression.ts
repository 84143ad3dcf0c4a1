// In charge of reading a policy expression as PostgreSQL prints it (pg_get_expr with an empty
// search_path, so every function outside pg_catalog is schema-qualified): its tokens, the function
// calls it makes, which of them sit in a sub-select evaluated once per statement, and its OR and
// AND parts.
// Text analysis, as Supabase's splinter does, with string literals and quoted names kept apart so a
// literal that looks like a call is not one.

export interface Token {
  kind: 'word' | 'quoted' | 'string' | 'number' | 'symbol';
  /** the token as written */
  text: string;
  /** a name's value: unquoted words lower-cased, quoted names as written */
  value: string;
  start: number;
  end: number;
}

export interface Call {
  /** the schema as written before the name; '' when the call is unqualified */
  schema: string;
  name: string;
  /** index of the name's token */
  at: number;
}

interface Group {
  open: number;
  close: number;
  subselect: boolean;
}

export interface Expression {
  source: string;
  tokens: Token[];
  groups: Group[];
}

const WORD = /[A-Za-z_\u0080-\uffff][A-Za-z0-9_$\u0080-\uffff]*/y;
const NUMBER = /[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (/\s/.test(ch)) {
      i++;
      continue;
    }
    const start = i;
    // 'literal', E'literal' (backslash escapes), "quoted name": doubled quotes stay inside.
    const escaped = (ch === 'E' || ch === 'e') && source[i + 1] === "'";
    if (ch === "'" || ch === '"' || escaped) {
      const quote = escaped ? "'" : ch;
      i += escaped ? 2 : 1;
      let value = '';
      while (i < source.length) {
        const c = source[i]!;
        if (escaped && c === '\\') {
          value += source[i + 1] ?? '';
          i += 2;
        } else if (c === quote && source[i + 1] === quote) {
          value += quote;
          i += 2;
        } else if (c === quote) {
          i++;
          break;
        } else {
          value += c;
          i++;
        }
      }
      tokens.push({
        kind: quote === '"' ? 'quoted' : 'string',
        text: source.slice(start, i),
        value,
        start,
        end: i,
      });
      continue;
    }
    for (const [kind, pattern] of [
      ['word', WORD],
      ['number', NUMBER],
    ] as const) {
      pattern.lastIndex = i;
      const match = pattern.exec(source);
      if (match) {
        i += match[0].length;
        const value = kind === 'word' ? match[0].toLowerCase() : match[0];
        tokens.push({ kind, text: match[0], value, start, end: i });
        break;
      }
    }
    if (i === start) {
      tokens.push({ kind: 'symbol', text: ch, value: ch, start, end: i + 1 });
      i++;
    }
  }
  return tokens;
}

export function parseExpression(source: string): Expression {
  const tokens = tokenize(source);
  const groups: Group[] = [];
  const open: number[] = [];
  tokens.forEach((token, index) => {
    if (token.kind !== 'symbol') return;
    if (token.text === '(') open.push(index);
    else if (token.text === ')') {
      const from = open.pop();
      if (from === undefined) return;
      const first = tokens[from + 1];
      groups.push({
        open: from,
        close: index,
        subselect: first?.kind === 'word' && (first.value === 'select' || first.value === 'with'),
      });
    }
  });
  return { source, tokens, groups };
}

function isName(token: Token | undefined): token is Token {
  return token !== undefined && (token.kind === 'word' || token.kind === 'quoted');
}

function isSymbol(token: Token | undefined, text: string): boolean {
  return token !== undefined && token.kind === 'symbol' && token.text === text;
}

/** Words PostgreSQL prints before a parenthesis that are not function names. */
const KEYWORDS = new Set([
  'and',
  'or',
  'not',
  'in',
  'any',
  'all',
  'some',
  'exists',
  'array',
  'row',
  'case',
  'when',
  'then',
  'else',
  'end',
  'select',
  'from',
  'where',
  'on',
  'as',
  'is',
  'using',
  'values',
]);

/** Every `name(` and `schema.name(` in tokens [from, to). */
export function calls(expression: Expression, from = 0, to = expression.tokens.length): Call[] {
  const { tokens } = expression;
  const found: Call[] = [];
  for (let i = from; i < to; i++) {
    const token = tokens[i];
    if (!isName(token) || !isSymbol(tokens[i + 1], '(')) continue;
    const qualified = isSymbol(tokens[i - 1], '.') && isName(tokens[i - 2]);
    if (!qualified && token.kind === 'word' && KEYWORDS.has(token.value)) continue;
    found.push({ schema: qualified ? tokens[i - 2]!.value : '', name: token.value, at: i });
  }
  return found;
}

/**
 * True when the sub-select mentions the policy's own row: PostgreSQL prints a column of the outer
 * row inside a sub-select qualified by the table's name (`t.user_id`), so such a sub-select is
 * correlated and runs again for every row.
 */
function mentionsRow(expression: Expression, group: Group, table: string): boolean {
  const { tokens } = expression;
  for (let i = group.open + 1; i < group.close; i++) {
    const token = tokens[i];
    if (
      isName(token) &&
      token.value === table &&
      isSymbol(tokens[i + 1], '.') &&
      !isSymbol(tokens[i - 1], '.')
    )
      return true;
  }
  return false;
}

/**
 * True when the call is evaluated once per statement: it sits inside a sub-select that does not
 * mention the policy's row (PostgreSQL runs such a sub-select once, as an InitPlan, and reuses its
 * value for every row).
 */
export function evaluatedOnce(expression: Expression, call: Call, table: string): boolean {
  return expression.groups.some(
    (group) =>
      group.subselect &&
      group.open < call.at &&
      call.at < group.close &&
      !mentionsRow(expression, group, table),
  );
}

function matchingClose(expression: Expression, open: number): number | undefined {
  return expression.groups.find((group) => group.open === open)?.close;
}

function isSubselect(expression: Expression, open: number): boolean {
  return expression.groups.some((group) => group.open === open && group.subselect);
}

/** Splits tokens [from, to) at the keyword (OR, AND) where it stands outside every parenthesis. */
export function splitAt(
  expression: Expression,
  from: number,
  to: number,
  keyword: string,
): Array<[number, number]> {
  const parts: Array<[number, number]> = [];
  let depth = 0;
  let start = from;
  for (let i = from; i < to; i++) {
    const token = expression.tokens[i]!;
    if (isSymbol(token, '(') || isSymbol(token, '[')) depth++;
    else if (isSymbol(token, ')') || isSymbol(token, ']')) depth--;
    else if (depth === 0 && token.kind === 'word' && token.value === keyword) {
      parts.push([start, i]);
      start = i + 1;
    }
  }
  parts.push([start, to]);
  return parts;
}

/** Tokens [from, to) without parentheses that wrap all of them (a sub-select's are kept). */
export function unwrap(expression: Expression, from: number, to: number): [number, number] {
  while (
    to - from >= 2 &&
    isSymbol(expression.tokens[from], '(') &&
    matchingClose(expression, from) === to - 1 &&
    !isSubselect(expression, from)
  ) {
    from++;
    to--;
  }
  return [from, to];
}

/** The source text of tokens [from, to). */
export function textOf(expression: Expression, from: number, to: number): string {
  const first = expression.tokens[from];
  const last = expression.tokens[to - 1];
  if (!first || !last) return '';
  return expression.source.slice(first.start, last.end).replace(/\s+/g, ' ');
}
