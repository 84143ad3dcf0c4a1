// In charge of checking a parsed request against the schema cache and resolving every name:
// tables, columns, casts, relationships for embeds, functions and their arguments. The result
// (a plan) only contains names that exist; sql.ts turns it into SQL. Pure.
import { HttpError } from '../http/errors.js';
import {
  MAX_EMBED_DEPTH,
  syntaxError,
  type AggregateFunction,
  type Condition,
  type FilterNode,
  type OrderTerm,
  type SelectItem,
} from './grammar.js';
import { computedField, findRelationship, isToOne } from './relationships.js';
import { jsonPathName, type JsonStep } from './json-path.js';
import type { ApiRequest, EmbedOptions } from './request.js';
import type { Column, DbFunction, Schema, Table } from './schema-cache.js';

export interface ResolvedCondition {
  kind: 'condition';
  column: string;
  jsonPath?: JsonStep[];
  operator: Condition['operator'];
  negate: boolean;
  value: Condition['value'];
  quantifier?: Condition['quantifier'];
  language?: string;
  columnInfo: Column;
  /** a computed field: the function `column` of a row of this table */
  computed?: string;
}
export interface ResolvedLogic {
  kind: 'and' | 'or';
  negate: boolean;
  items: ResolvedFilter[];
}
/** `rel=is.null` / `rel=not.is.null`: parents with (or without) a matching embedded row. */
export interface ResolvedEmbedPresence {
  kind: 'embed-presence';
  embed: EmbedPlan;
  present: boolean;
}
export type ResolvedFilter = ResolvedCondition | ResolvedLogic | ResolvedEmbedPresence;

export interface ResolvedOrder {
  column: string;
  /** with the column's type, which decides how the path applies */
  jsonPath?: { steps: JsonStep[]; columnType: string };
  descending: boolean;
  nulls?: 'first' | 'last';
  /** a computed field: the function `column` of a row of this table */
  computed?: string;
  /** `order=rel(col)`: the column belongs to this to-one embed */
  embed?: EmbedPlan;
}

export type PlannedItem =
  | {
      kind: 'column';
      column: string;
      as: string;
      cast?: string;
      jsonPath?: { steps: JsonStep[]; columnType: string };
      /** a computed field: the function `column` of a row of this table */
      computed?: string;
      aggregate?: AggregateFunction;
      aggregateCast?: string;
    }
  /** `count()`: rows per group; `legacy` for the older `rel(count)`, allowed without aggregates */
  | { kind: 'count'; as: string; cast?: string; legacy?: boolean }
  | { kind: 'embed'; as: string; embed: EmbedPlan; spread?: boolean };

export interface EmbedPlan {
  table: Table;
  toOne: boolean;
  inner: boolean;
  /** pairs of (embedded table column, parent column) to join on */
  join: { child: string; parent: string }[];
  /** many-to-many: the junction table, and its columns matching the embedded and parent rows */
  junction?: {
    table: string;
    child: { junction: string; child: string }[];
    parent: { junction: string; parent: string }[];
  };
  /** a computed relationship: the embedded rows are `name(parent row)`, the row of `argTable` */
  fn?: { name: string; argTable: string };
  items: PlannedItem[];
  where: ResolvedFilter[];
  order: ResolvedOrder[];
  limit?: number;
  offset?: number;
}

export interface ReadPlan {
  source: { kind: 'table'; table: Table } | { kind: 'function'; call: FunctionCall; columns: Table };
  items: PlannedItem[];
  where: ResolvedFilter[];
  order: ResolvedOrder[];
  limit?: number;
  offset?: number;
}

export interface FunctionCall {
  fn: DbFunction;
  /** argument name -> value already converted for the driver; a row type arrives as JSON text */
  args: { name: string; type: string; value: unknown; rowType?: boolean }[];
  /** the whole JSON body for a single unnamed json argument */
  wholeBody?: unknown;
}

/** Casts accepted in select lists, mapped to the SQL type written out. */
const CASTS: Record<string, string> = {
  text: 'text',
  int: 'integer',
  integer: 'integer',
  int4: 'integer',
  bigint: 'bigint',
  int8: 'bigint',
  numeric: 'numeric',
  float: 'double precision',
  float8: 'double precision',
  boolean: 'boolean',
  bool: 'boolean',
  json: 'json',
  jsonb: 'jsonb',
  date: 'date',
  timestamptz: 'timestamptz',
  uuid: 'uuid',
};

export function notFoundTable(name: string, schema = 'public'): HttpError {
  return new HttpError(404, `Could not find the table '${schema}.${name}' in the schema cache`, {
    code: 'PGRST205',
  });
}

function unknownColumn(table: string, column: string): HttpError {
  return new HttpError(400, `Could not find the '${column}' column of '${table}' in the schema cache`, {
    code: 'PGRST204',
  });
}

export function findTable(schema: Schema, name: string): Table {
  const table = schema.tables.get(name);
  if (!table) throw notFoundTable(name, schema.name);
  return table;
}

export function requireColumn(table: Table, name: string): Column {
  const column = table.columns.get(name);
  if (!column) throw unknownColumn(table.name, name);
  return column;
}

/** A column, or a computed field (a function of the row) used like one. */
function resolveColumn(
  schema: Schema | undefined,
  table: Table,
  name: string,
): { columnInfo: Column; computed?: string } {
  const column = table.columns.get(name);
  if (column) return { columnInfo: column };
  const fn = schema ? computedField(schema, table.name, name) : undefined;
  if (!fn) return { columnInfo: requireColumn(table, name) };
  return {
    columnInfo: { name, type: fn.returnType, nullable: true, hasDefault: false, defaultExpression: null },
    computed: table.name,
  };
}

function resolveFilters(table: Table, nodes: FilterNode[], schema?: Schema): ResolvedFilter[] {
  return nodes.map((node): ResolvedFilter => {
    if (node.kind === 'condition') {
      return {
        kind: 'condition',
        column: node.column,
        ...(node.jsonPath ? { jsonPath: node.jsonPath } : {}),
        operator: node.operator,
        negate: node.negate,
        value: node.value,
        ...(node.quantifier ? { quantifier: node.quantifier } : {}),
        ...(node.language !== undefined ? { language: node.language } : {}),
        ...resolveColumn(schema, table, node.column),
      };
    }
    return { kind: node.kind, negate: node.negate, items: resolveFilters(table, node.items, schema) };
  });
}

function resolveOrder(
  table: Table,
  terms: OrderTerm[],
  schema?: Schema,
  items: PlannedItem[] = [],
): ResolvedOrder[] {
  return terms.map((t) => {
    const base = {
      column: t.column,
      descending: t.descending,
      ...(t.nulls ? { nulls: t.nulls } : {}),
    };
    if (t.relation !== undefined)
      return { ...base, embed: relatedOrderEmbed(table, t.relation, t.column, items) };
    const { computed, columnInfo } = resolveColumn(schema, table, t.column);
    if (t.jsonPath) return { ...base, jsonPath: { steps: t.jsonPath, columnType: columnInfo.type } };
    return computed ? { ...base, computed } : base;
  });
}

/** `order=rel(col)`: rel must be embedded in the select, and to-one. */
function relatedOrderEmbed(table: Table, relation: string, column: string, items: PlannedItem[]): EmbedPlan {
  const item = items.find(
    (i): i is Extract<PlannedItem, { kind: 'embed' }> => i.kind === 'embed' && i.as === relation,
  );
  if (!item) {
    throw new HttpError(400, `'${relation}' is not an embedded resource in this request`, {
      code: 'PGRST108',
      hint: `Verify that '${relation}' is included in the 'select' query parameter.`,
    });
  }
  if (!item.embed.toOne) {
    throw new HttpError(400, `A related order on '${relation}' is not possible`, {
      code: 'PGRST118',
      details: `'${table.name}' and '${relation}' do not form a many-to-one or one-to-one relationship`,
    });
  }
  requireColumn(item.embed.table, column);
  return item.embed;
}

function planItems(
  schema: Schema,
  table: Table,
  items: SelectItem[],
  request: ApiRequest,
  /** filters, order and paging in the request apply to embeds at the top level only */
  topLevel: boolean,
  /** how PostgreSQL would name this level in an error: the table, or `<relation>_<depth>` */
  alias = table.name,
  depth = 0,
): PlannedItem[] {
  const planned: PlannedItem[] = [];
  const embedNames = new Set<string>();
  for (const item of items) {
    if (item.type === 'star') {
      for (const column of table.columns.keys()) planned.push({ kind: 'column', column, as: column });
    } else if (item.type === 'count') {
      planned.push({ kind: 'count', as: item.alias ?? 'count', ...castOf(item.cast) });
    } else if (item.type === 'column') {
      // `rel(count)`, PostgREST's older spelling of `rel(count())`, where no column is called count.
      if (
        depth > 0 &&
        item.name === 'count' &&
        !item.aggregate &&
        !item.cast &&
        !table.columns.has('count')
      ) {
        planned.push({ kind: 'count', as: item.alias ?? 'count', legacy: true });
        continue;
      }
      if (!table.columns.has(item.name) && !computedField(schema, table.name, item.name)) {
        // What PostgREST answers, as PostgreSQL words it, for a column that is not there.
        throw new HttpError(400, `column ${alias}.${item.name} does not exist`, { code: '42703' });
      }
      const { computed } = resolveColumn(schema, table, item.name);
      const aggregateCast = item.aggregateCast !== undefined ? castOf(item.aggregateCast).cast : undefined;
      planned.push({
        kind: 'column',
        column: item.name,
        // A JSON path answers under its last key, as PostgREST names it.
        as:
          item.alias ??
          item.aggregate ??
          (item.jsonPath ? jsonPathName(item.name, item.jsonPath) : item.name),
        ...castOf(item.cast),
        ...(item.jsonPath
          ? {
              jsonPath: {
                steps: item.jsonPath,
                columnType: resolveColumn(schema, table, item.name).columnInfo.type,
              },
            }
          : {}),
        ...(computed ? { computed } : {}),
        ...(item.aggregate ? { aggregate: item.aggregate } : {}),
        ...(aggregateCast ? { aggregateCast } : {}),
      });
    } else {
      const rel = findRelationship(schema, table.name, item.relation, item.hint);
      if (depth + 1 > MAX_EMBED_DEPTH && item.items.length > 0) {
        throw syntaxError(`Embedding is limited to ${MAX_EMBED_DEPTH} levels`, item.relation);
      }
      const child = findTable(schema, rel.target);
      const toOne = isToOne(rel);
      if (item.spread && !toOne && rel.kind !== 'fk' && rel.kind !== 'm2m') {
        throw new HttpError(400, `A spread operation on '${item.relation}' is not possible`, {
          code: 'PGRST119',
          details: `'${table.name}' and '${item.relation}' do not form a many-to-one or one-to-one relationship`,
        });
      }
      const link: Pick<EmbedPlan, 'join' | 'junction' | 'fn'> =
        rel.kind === 'fk'
          ? { join: rel.columns.map(([parent, childColumn]) => ({ child: childColumn, parent })) }
          : rel.kind === 'm2m'
            ? {
                join: [],
                junction: {
                  table: rel.junction,
                  child: rel.targetColumns.map(([c, j]) => ({ junction: j, child: c })),
                  parent: rel.sourceColumns.map(([p, j]) => ({ junction: j, parent: p })),
                },
              }
            : { join: [], fn: { name: rel.fn.name, argTable: table.name } };
      const as = item.alias ?? item.relation;
      if (!item.spread && item.items.length > 0) {
        // Two embeds under one key: PostgREST's SQL names both alike, and PostgreSQL refuses it.
        if (embedNames.has(as)) {
          throw new HttpError(400, `table name "${table.name}_${as}_${depth + 1}" specified more than once`, {
            code: '42712',
          });
        }
        embedNames.add(as);
      }
      const options: EmbedOptions = (topLevel &&
        (request.embedOptions.get(as) ?? request.embedOptions.get(item.relation))) || { order: [] };
      const embedFilters = topLevel
        ? request.filters.filter(
            (f) => f.path.length === 1 && (f.path[0] === as || f.path[0] === item.relation),
          )
        : [];
      planned.push({
        kind: 'embed',
        as,
        ...(item.spread ? { spread: true } : {}),
        embed: {
          table: child,
          toOne,
          inner: item.inner,
          ...link,
          items: planItems(
            schema,
            child,
            item.items,
            request,
            false,
            `${item.relation}_${depth + 1}`,
            depth + 1,
          ),
          where: resolveFilters(child, embedFilters, schema),
          order: resolveOrder(child, options.order, schema),
          ...(options.limit !== undefined ? { limit: options.limit } : {}),
          ...(options.offset !== undefined ? { offset: options.offset } : {}),
        },
      });
    }
  }
  return planned;
}

function castOf(name: string | undefined): { cast?: string } {
  if (name === undefined) return {};
  const cast = CASTS[name];
  if (!cast) throw new HttpError(400, `Casting to '${name}' is not supported`, { code: 'PGRST100' });
  return { cast };
}

function checkEmbedPaths(request: ApiRequest, items: PlannedItem[]): void {
  const embedded = new Set(items.filter((i) => i.kind === 'embed').map((i) => i.as));
  const names = new Set<string>(embedded);
  for (const item of request.select) if (item.type === 'embed') names.add(item.relation);
  for (const filter of request.filters) {
    const path = filter.path[0];
    if (path !== undefined && !names.has(path)) {
      throw new HttpError(400, `'${path}' is not an embedded resource in this request`, { code: 'PGRST108' });
    }
  }
  for (const key of request.embedOptions.keys()) {
    if (!names.has(key)) {
      throw new HttpError(400, `'${key}' is not an embedded resource in this request`, { code: 'PGRST108' });
    }
  }
}

/** Top-level filters; one naming an embed instead of a column tests whether it has rows. */
function resolveTopFilters(
  schema: Schema,
  table: Table,
  items: PlannedItem[],
  filters: FilterNode[],
): ResolvedFilter[] {
  const embeds = new Map<string, EmbedPlan>();
  for (const item of items) {
    if (item.kind === 'embed') {
      embeds.set(item.as, item.embed);
      if (!embeds.has(item.embed.table.name)) embeds.set(item.embed.table.name, item.embed);
    }
  }
  return filters
    .filter((f) => f.path.length === 0)
    .map((f): ResolvedFilter => {
      const embed =
        f.kind === 'condition' && !f.jsonPath && !table.columns.has(f.column)
          ? embeds.get(f.column)
          : undefined;
      if (!embed || f.kind !== 'condition') return resolveFilters(table, [f], schema)[0]!;
      if (f.operator !== 'is' || (f.value !== 'null' && f.value !== 'not_null')) {
        throw new HttpError(
          400,
          `Only is.null or not.is.null filters are allowed on embedded '${f.column}'`,
          {
            code: 'PGRST120',
          },
        );
      }
      return { kind: 'embed-presence', embed, present: (f.value === 'not_null') !== f.negate };
    });
}

export function planRead(schema: Schema, request: ApiRequest, table: Table): ReadPlan {
  const items = planItems(schema, table, request.select, request, true);
  checkEmbedPaths(request, items);
  return {
    source: { kind: 'table', table },
    items,
    where: resolveTopFilters(schema, table, items, request.filters),
    order: resolveOrder(table, request.order, schema, items),
    ...(request.limit !== undefined ? { limit: request.limit } : {}),
    ...(request.offset !== undefined ? { offset: request.offset } : {}),
  };
}

// ----------------------------------------------------------------------------------- writes

export interface WritePlan {
  table: Table;
  /** columns written, all known to exist */
  columns: string[];
  /** per column: the default to use when a row omits it (null = NULL) */
  defaults: Map<string, string | null>;
  /** true when every row names every column (no per-row defaulting needed) */
  uniform: boolean;
  rows: Record<string, unknown>[];
  conflict?: { columns: string[]; action: 'merge' | 'ignore' };
}

function bodyError(message: string): HttpError {
  return new HttpError(400, message, { code: 'PGRST102' });
}

export function planInsert(request: ApiRequest, table: Table, body: unknown): WritePlan {
  if (!table.insertable) throw new HttpError(405, `Cannot insert into '${table.name}'`, { code: 'PGRST117' });
  const rows = Array.isArray(body) ? body : [body];
  if (body === undefined || rows.some((r) => r === null || typeof r !== 'object' || Array.isArray(r))) {
    throw bodyError('The body must be a JSON object or an array of objects');
  }
  const objects = rows as Record<string, unknown>[];
  const keys = request.columns ?? [...new Set(objects.flatMap((r) => Object.keys(r)))];
  for (const key of keys) requireColumn(table, key);
  const uniform = objects.every((r) => keys.every((k) => Object.hasOwn(r, k)));
  const defaults = new Map<string, string | null>();
  for (const key of keys) {
    const column = table.columns.get(key)!;
    defaults.set(key, request.prefer.missing === 'default' ? column.defaultExpression : null);
  }
  let conflict: WritePlan['conflict'];
  if (request.prefer.resolution) {
    const columns = request.onConflict ?? table.primaryKey;
    if (columns.length === 0) throw bodyError(`'${table.name}' has no primary key; pass on_conflict`);
    for (const c of columns) requireColumn(table, c);
    conflict = { columns, action: request.prefer.resolution === 'merge-duplicates' ? 'merge' : 'ignore' };
  }
  return { table, columns: keys, defaults, uniform, rows: objects, ...(conflict ? { conflict } : {}) };
}

export function planUpdate(request: ApiRequest, table: Table, body: unknown): WritePlan {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw bodyError('The body of an update must be a JSON object');
  }
  const row = body as Record<string, unknown>;
  const columns = Object.keys(row);
  if (columns.length === 0) throw bodyError('The body of an update names no columns');
  for (const c of columns) requireColumn(table, c);
  requireFilters(request, 'UPDATE');
  return { table, columns, defaults: new Map(), uniform: true, rows: [row] };
}

export function requireFilters(request: ApiRequest, verb: 'UPDATE' | 'DELETE'): void {
  if (request.filters.length === 0) {
    throw new HttpError(400, `${verb} requires a WHERE clause`, {
      code: '21000',
      hint: 'Add a filter, e.g. ?id=eq.<id>, so that not every row is changed',
    });
  }
  if (request.filters.some((f) => f.path.length > 0)) {
    throw new HttpError(400, `Filters on embedded resources are not allowed in an ${verb}`, {
      code: 'PGRST100',
    });
  }
}

// -------------------------------------------------------------------------------------- rpc

/** A function's result columns as a table, so select/filters/order can apply to it. */
export function resultTable(fn: DbFunction, schema: Schema): Table {
  const fromTable = schema.tables.get(fn.returnType.replace(/^public\./, '').replace(`${schema.name}.`, ''));
  if (fromTable) return fromTable;
  const columns = new Map<string, Column>();
  for (const { name, type } of fn.returnColumns ?? []) {
    columns.set(name, { name, type, nullable: true, hasDefault: false, defaultExpression: null });
  }
  return {
    schema: fn.schema,
    name: fn.name,
    columns,
    primaryKey: [],
    uniqueKeys: [],
    insertable: false,
    rowSecurity: true,
  };
}
