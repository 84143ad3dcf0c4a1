// In charge of the relationships an embed can follow, as PostgREST sees them: every foreign key
// from both ends (many-to-one, one-to-many, or one-to-one when its columns are unique), many-to-
// many through a junction table, computed relationships (functions taking a row and returning
// rows of another table) and computed fields; and of choosing one for `target!hint`, answering
// PostgREST's PGRST200 (none) and PGRST201 (ambiguous) bodies. Pure; derived once per schema.
import { HttpError } from '../http/errors.js';
import type { DbFunction, Schema, Table } from './schema-cache.js';

export type Cardinality = 'many-to-one' | 'one-to-many' | 'one-to-one' | 'many-to-many';

export interface ForeignKeyRelationship {
  kind: 'fk';
  origin: string;
  target: string;
  cardinality: 'many-to-one' | 'one-to-many' | 'one-to-one';
  constraint: string;
  /** (origin column, target column) pairs */
  columns: [string, string][];
  isSelf: boolean;
  /** a relationship reaching a view is only named by the view, never by constraint or column */
  targetIsView: boolean;
}

export interface JunctionRelationship {
  kind: 'm2m';
  origin: string;
  target: string;
  junction: string;
  /** the junction's key to the origin, and to the target */
  constraint1: string;
  constraint2: string;
  /** (origin column, junction column) pairs */
  sourceColumns: [string, string][];
  /** (target column, junction column) pairs */
  targetColumns: [string, string][];
  isSelf: boolean;
}

export interface ComputedRelationship {
  kind: 'computed';
  origin: string;
  target: string;
  fn: DbFunction;
}

export type EmbedRelationship = ForeignKeyRelationship | JunctionRelationship | ComputedRelationship;

export function isToOne(rel: EmbedRelationship): boolean {
  if (rel.kind === 'fk') return rel.cardinality !== 'one-to-many';
  if (rel.kind === 'computed') return !rel.fn.returnsSet || rel.fn.returnsOneRow === true;
  return false;
}

/** A function's argument or return type as the table it names, if it names one of ours. */
function tableOfType(schema: Schema, type: string): Table | undefined {
  let name = type.startsWith('public.') ? type.slice('public.'.length) : type;
  if (name.startsWith('"') && name.endsWith('"')) name = name.slice(1, -1).replace(/""/g, '"');
  return schema.tables.get(name);
}

/** The table whose row is the function's only argument, when it has exactly one. */
function rowArgumentTable(schema: Schema, fn: DbFunction): Table | undefined {
  if (fn.args.length !== 1) return undefined;
  return tableOfType(schema, fn.args[0]!.type);
}

function isUnique(table: Table | undefined, columns: string[]): boolean {
  if (!table) return false;
  return [table.primaryKey, ...table.uniqueKeys].some(
    (key) => key.length === columns.length && key.every((c) => columns.includes(c)),
  );
}

interface Derived {
  byOrigin: Map<string, EmbedRelationship[]>;
  /** per table: functions taking its row and returning one value (computed fields) */
  computedFields: Map<string, Map<string, DbFunction>>;
}

const derived = new WeakMap<Schema, Derived>();

function derive(schema: Schema): Derived {
  const byOrigin = new Map<string, EmbedRelationship[]>();
  const add = (rel: EmbedRelationship) => {
    const list = byOrigin.get(rel.origin) ?? [];
    list.push(rel);
    byOrigin.set(rel.origin, list);
  };
  const isView = (name: string) => schema.tables.get(name)?.view === true;
  for (const fk of [...schema.relationships, ...(schema.viewRelationships ?? [])]) {
    const pairs = fk.columns.map((c, i): [string, string] => [c, fk.foreignColumns[i]!]);
    const oneToOne = isUnique(schema.tables.get(fk.table), fk.columns);
    const isSelf = fk.table === fk.foreignTable;
    add({
      kind: 'fk',
      origin: fk.table,
      target: fk.foreignTable,
      cardinality: oneToOne ? 'one-to-one' : 'many-to-one',
      constraint: fk.constraint,
      columns: pairs,
      isSelf,
      targetIsView: isView(fk.foreignTable),
    });
    add({
      kind: 'fk',
      origin: fk.foreignTable,
      target: fk.table,
      cardinality: oneToOne ? 'one-to-one' : 'one-to-many',
      constraint: fk.constraint,
      columns: pairs.map(([c, f]): [string, string] => [f, c]),
      isSelf,
      targetIsView: isView(fk.table),
    });
  }
  // A junction: a table with keys to two others whose columns all belong to its primary key
  // (or one of its unique keys), so each pair of rows is linked at most once.
  const keysByTable = new Map<string, Schema['relationships']>();
  for (const fk of schema.relationships) {
    if (isView(fk.table)) continue;
    keysByTable.set(fk.table, [...(keysByTable.get(fk.table) ?? []), fk]);
  }
  for (const [junction, keys] of keysByTable) {
    const table = schema.tables.get(junction);
    if (!table) continue;
    const candidateKeys = [table.primaryKey, ...table.uniqueKeys].filter((k) => k.length > 0);
    for (const a of keys) {
      for (const b of keys) {
        if (a === b) continue;
        const columns = [...a.columns, ...b.columns];
        if (!candidateKeys.some((key) => columns.every((c) => key.includes(c)))) continue;
        add({
          kind: 'm2m',
          origin: a.foreignTable,
          target: b.foreignTable,
          junction,
          constraint1: a.constraint,
          constraint2: b.constraint,
          sourceColumns: a.foreignColumns.map((c, i): [string, string] => [c, a.columns[i]!]),
          targetColumns: b.foreignColumns.map((c, i): [string, string] => [c, b.columns[i]!]),
          isSelf: a.foreignTable === b.foreignTable,
        });
      }
    }
  }
  const computedFields = new Map<string, Map<string, DbFunction>>();
  for (const overloads of schema.functions.values()) {
    for (const fn of overloads) {
      const origin = rowArgumentTable(schema, fn);
      if (!origin) continue;
      const target = tableOfType(schema, fn.returnType);
      if (target && fn.returnColumns) {
        add({ kind: 'computed', origin: origin.name, target: target.name, fn });
      } else if (!fn.returnsSet && !fn.returnsVoid) {
        const fields = computedFields.get(origin.name) ?? new Map<string, DbFunction>();
        fields.set(fn.name, fn);
        computedFields.set(origin.name, fields);
      }
    }
  }
  return { byOrigin, computedFields };
}

function derivedOf(schema: Schema): Derived {
  let found = derived.get(schema);
  if (!found) derived.set(schema, (found = derive(schema)));
  return found;
}

/** `fn(row)` computed fields of a table: a function usable like a column in select, filters and order. */
export function computedField(schema: Schema, table: string, name: string): DbFunction | undefined {
  return derivedOf(schema).computedFields.get(table)?.get(name);
}

function matches(rel: EmbedRelationship, target: string, hint: string | undefined): boolean {
  if (rel.kind === 'computed') return rel.fn.name === target;
  const single = rel.kind === 'fk' && rel.columns.length === 1 ? rel.columns[0]! : undefined;
  const fkColumn = (name: string) => single?.[0] === name;
  const referencedColumn = (name: string) => single?.[1] === name;
  const constraint = (name: string) => rel.kind === 'fk' && rel.constraint === name;
  const junction = (name: string) => rel.kind === 'm2m' && rel.junction === name;
  const cardinality = rel.kind === 'fk' ? rel.cardinality : 'many-to-many';
  if (rel.isSelf) {
    // One foreign key, two readings: the table's name gives the children (one-to-many), the
    // key column's name the parent (many-to-one); a hint names the children's key column.
    if (hint === undefined) {
      return (
        (target === rel.target && cardinality === 'one-to-many') ||
        (fkColumn(target) && cardinality === 'many-to-one')
      );
    }
    return target === rel.target && cardinality === 'one-to-many' && referencedColumn(hint);
  }
  if (hint === undefined) {
    const viaKey = rel.kind === 'fk' && !rel.targetIsView && (constraint(target) || fkColumn(target));
    return target === rel.target || viaKey;
  }
  return (
    target === rel.target && (constraint(hint) || fkColumn(hint) || referencedColumn(hint) || junction(hint))
  );
}

const list = (names: string[]) => `(${names.join(', ')})`;

/** One candidate as PostgREST lists it in a PGRST201 body. */
function describe(rel: EmbedRelationship): Record<string, string> {
  const embedding = `${rel.origin} with ${rel.target}`;
  if (rel.kind === 'm2m') {
    return {
      cardinality: 'many-to-many',
      embedding,
      relationship:
        `${rel.junction} using ${rel.constraint1}${list(rel.sourceColumns.map(([, j]) => j))}` +
        ` and ${rel.constraint2}${list(rel.targetColumns.map(([, j]) => j))}`,
    };
  }
  if (rel.kind === 'computed') {
    return {
      cardinality: isToOne(rel) ? 'many-to-one' : 'one-to-many',
      embedding,
      relationship: `${rel.fn.name} using ${rel.origin}`,
    };
  }
  return {
    cardinality: rel.cardinality,
    embedding,
    relationship:
      `${rel.constraint} using ${rel.origin}${list(rel.columns.map(([o]) => o))}` +
      ` and ${rel.target}${list(rel.columns.map(([, t]) => t))}`,
  };
}

function suggestion(rel: EmbedRelationship): string {
  const name = rel.kind === 'm2m' ? rel.junction : rel.kind === 'fk' ? rel.constraint : rel.fn.name;
  return `'${rel.target}!${name}'`;
}

/** The one relationship `origin?select=target!hint(...)` means, or PostgREST's error. */
export function findRelationship(
  schema: Schema,
  origin: string,
  target: string,
  hint: string | undefined,
): EmbedRelationship {
  const found = (derivedOf(schema).byOrigin.get(origin) ?? []).filter((rel) => matches(rel, target, hint));
  if (found.length === 1) return found[0]!;
  if (found.length === 0) {
    const using = hint !== undefined ? ` using the hint '${hint}'` : '';
    throw new HttpError(
      400,
      `Could not find a relationship between '${origin}' and '${target}' in the schema cache`,
      {
        code: 'PGRST200',
        details: `Searched for a foreign key relationship between '${origin}' and '${target}'${using} in the schema 'public', but no matches were found.`,
        hint: null,
      },
    );
  }
  throw new HttpError(
    300,
    `Could not embed because more than one relationship was found for '${origin}' and '${target}'`,
    {
      code: 'PGRST201',
      details: found.map(describe),
      hint: `Try changing '${target}' to one of the following: ${found.map(suggestion).join(', ')}. Find the desired relationship in the 'details' key.`,
    },
  );
}
