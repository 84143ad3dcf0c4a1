// In charge of following foreign keys through views, as PostgREST does: a view's columns are
// traced back to the table columns they show, from the view's stored query tree
// (pg_rewrite.ev_action), and each key whose columns a view shows becomes a relationship of the
// view. Pure; the tree's text is parsed, never evaluated.
import type { CatalogRelationship } from './catalog.js';

export interface ColumnSource {
  table: number;
  column: number;
}

/**
 * The top-level target list of a stored query tree: for each output column (resno), the table
 * column it comes from unchanged (resorigtbl/resorigcol), when there is one. Nested queries
 * (subqueries, CTEs) have target lists too; only the outermost QUERY node's counts.
 */
export function targetSources(tree: string): Map<number, ColumnSource> {
  const sources = new Map<number, ColumnSource>();
  // Find ":targetList" at depth 1: inside the first QUERY node and not inside any nested node.
  let depth = 0;
  let start = -1;
  for (let i = 0; i < tree.length; i++) {
    const ch = tree[i];
    if (ch === '\\') {
      i++; // an escaped character inside a name, never structure
      continue;
    }
    if (ch === '{') depth++;
    else if (ch === '}') {
      depth--;
      if (depth === 0) break; // end of the first QUERY node
    } else if (depth === 1 && tree.startsWith(':targetList ', i)) {
      start = i + ':targetList '.length;
      break;
    }
  }
  if (start < 0 || tree[start] !== '(') return sources;
  // Each TARGETENTRY node of that list, at depth 1 relative to the list.
  depth = 0;
  let entryStart = -1;
  for (let i = start + 1; i < tree.length; i++) {
    const ch = tree[i];
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '{') {
      if (depth === 0) entryStart = i;
      depth++;
    } else if (ch === '}') {
      depth--;
      if (depth === 0) readEntry(tree.slice(entryStart, i + 1), sources);
    } else if (ch === ')' && depth === 0) break;
  }
  return sources;
}

/** Reads resno, resorigtbl and resorigcol of one TARGETENTRY, skipping its nested expression. */
function readEntry(entry: string, sources: Map<number, ColumnSource>): void {
  // The entry's own fields follow its expression; read them at the entry's own depth.
  let depth = 0;
  let own = '';
  for (let i = 0; i < entry.length; i++) {
    const ch = entry[i]!;
    if (ch === '\\') {
      i++;
      continue;
    }
    if (ch === '{' || ch === '(') depth++;
    else if (ch === '}' || ch === ')') depth--;
    else if (depth === 1) own += ch;
  }
  const field = (name: string) => Number(new RegExp(`:${name} (\\d+)`).exec(own)?.[1] ?? 0);
  const resno = field('resno');
  const table = field('resorigtbl');
  const column = field('resorigcol');
  if (resno > 0 && table > 0 && column > 0) sources.set(resno, { table, column });
}

/**
 * Where each view column finally comes from, following views over views to a table. Returns,
 * per view, the base (table, column) of each of its columns that shows one unchanged.
 */
export function resolveViewColumns(trees: Map<number, string>): Map<number, Map<number, ColumnSource>> {
  const direct = new Map([...trees].map(([view, tree]) => [view, targetSources(tree)]));
  const resolved = new Map<number, Map<number, ColumnSource>>();
  const resolve = (source: ColumnSource, seen: Set<number>): ColumnSource | null => {
    const next = direct.get(source.table);
    if (!next) return source; // a table
    if (seen.has(source.table)) return null; // a cycle: views cannot, but be safe
    const inner = next.get(source.column);
    return inner ? resolve(inner, new Set([...seen, source.table])) : null;
  };
  for (const [view, columns] of direct) {
    const map = new Map<number, ColumnSource>();
    for (const [resno, source] of columns) {
      const base = resolve(source, new Set([view]));
      if (base) map.set(resno, base);
    }
    resolved.set(view, map);
  }
  return resolved;
}

/** A foreign key between tables, with its columns' numbers as well as their names. */
export interface TableKey {
  relationship: CatalogRelationship;
  tableId: number;
  keyNumbers: number[];
  referencedId: number;
  referencedNumbers: number[];
}

export interface ViewInfo {
  id: number;
  schema: string;
  name: string;
  /** column names by attnum */
  columns: Map<number, string>;
}

/** Every way of picking one of the options per position. */
function combinations(options: string[][]): string[][] {
  return options.reduce<string[][]>(
    (acc, list) => acc.flatMap((prefix) => list.map((o) => [...prefix, o])),
    [[]],
  );
}

/**
 * The relationships a foreign key gives through views: from a view showing all its columns to
 * the referenced table, from the table to a view showing all the referenced columns, and from
 * view to view. A view showing a key column twice gives one relationship per choice.
 */
export function relationshipsThroughViews(
  keys: TableKey[],
  views: ViewInfo[],
  sources: Map<number, Map<number, ColumnSource>>,
): CatalogRelationship[] {
  // For a view and a table's columns, the view columns showing each one (all must be shown).
  const shown = (view: ViewInfo, table: number, columns: number[]): string[][] | null => {
    const map = sources.get(view.id);
    if (!map) return null;
    const options = columns.map((column) =>
      [...map]
        .filter(([, s]) => s.table === table && s.column === column)
        .map(([resno]) => view.columns.get(resno))
        .filter((name): name is string => name !== undefined),
    );
    return options.every((o) => o.length > 0) ? combinations(options) : null;
  };
  const result: CatalogRelationship[] = [];
  for (const key of keys) {
    const r = key.relationship;
    const from = views.flatMap((v) =>
      (shown(v, key.tableId, key.keyNumbers) ?? []).map((cols) => ({ v, cols })),
    );
    const to = views.flatMap((v) =>
      (shown(v, key.referencedId, key.referencedNumbers) ?? []).map((cols) => ({ v, cols })),
    );
    for (const { v, cols } of from) {
      result.push({ ...r, schema: v.schema, relation: v.name, columns: cols });
    }
    for (const { v, cols } of to) {
      result.push({ ...r, referencedSchema: v.schema, referencedRelation: v.name, referencedColumns: cols });
    }
    for (const a of from) {
      for (const b of to) {
        result.push({
          ...r,
          schema: a.v.schema,
          relation: a.v.name,
          columns: a.cols,
          referencedSchema: b.v.schema,
          referencedRelation: b.v.name,
          referencedColumns: b.cols,
        });
      }
    }
  }
  return result;
}
