// In charge of reading which relations a generated types file (`npm run gen:types`, the Supabase
// CLI's format) describes: the keys under `Database.<schema>.Tables` and `.Views`. A small scanner
// of keys and braces, not a TypeScript parser, so the command needs no compiler at run time.

/** schema → the tables and views the file has a type for; null when the file has no Database type. */
export function relationsInTypes(source: string): Map<string, Set<string>> | null {
  const start = /export\s+type\s+Database\s*=\s*\{/.exec(source);
  if (!start) return null;
  const found = new Map<string, Set<string>>();
  // The path of keys to the current brace: [] at Database, [schema], [schema, 'Tables'], …
  const path: string[] = [];
  let pendingKey: string | null = null;
  let i = start.index + start[0].length;
  while (i < source.length) {
    const ch = source[i]!;
    if (/\s/.test(ch)) {
      i++;
    } else if (source.startsWith('//', i)) {
      const end = source.indexOf('\n', i);
      i = end < 0 ? source.length : end;
    } else if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      i = end < 0 ? source.length : end + 2;
    } else if (ch === '"' || ch === "'") {
      let j = i + 1;
      let value = '';
      while (j < source.length && source[j] !== ch) {
        if (source[j] === '\\') j++;
        value += source[j] ?? '';
        j++;
      }
      i = j + 1;
      pendingKey = followedByColon(source, i) ? value : null;
    } else if (/[A-Za-z_$]/.test(ch)) {
      const word = /[A-Za-z0-9_$]+/y;
      word.lastIndex = i;
      const name = word.exec(source)![0];
      i += name.length;
      pendingKey = followedByColon(source, i) ? name : null;
    } else if (ch === '{' || ch === '[' || ch === '(') {
      path.push(ch === '{' && pendingKey !== null ? pendingKey : '');
      if (ch === '{' && pendingKey !== null && path.length === 3) {
        const [schema, kind, relation] = path as [string, string, string];
        if (kind === 'Tables' || kind === 'Views') {
          if (!found.has(schema)) found.set(schema, new Set());
          found.get(schema)!.add(relation);
        }
      }
      pendingKey = null;
      i++;
    } else if (ch === '}' || ch === ']' || ch === ')') {
      if (path.length === 0) break; // the end of the Database type
      path.pop();
      pendingKey = null;
      i++;
    } else {
      if (ch !== ':') pendingKey = null;
      i++;
    }
  }
  return found;
}

function followedByColon(source: string, from: number): boolean {
  const rest = /\s*(\?\s*)?:/y;
  rest.lastIndex = from;
  return rest.test(source);
}
