// In charge of writing SQL for a plan. The only place identifiers are quoted, and every name it
// quotes has already been found in the schema cache; every value is a $n parameter. Results are
// built as JSON inside Postgres so rows travel to the client as one text value. Pure.
import type {
  EmbedPlan,
  PlannedItem,
  ReadPlan,
  ResolvedFilter,
  ResolvedOrder,
  WritePlan,
  FunctionCall,
} from './plan.js';
import { fieldSql, operatorSql } from './operators.js';

export interface Query {
  text: string;
  values: unknown[];
  /** the result's columns besides `body` (the JSON text every statement here answers) */
  columns: string[];
}

class Params {
  readonly values: unknown[] = [];
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

/** What every statement may be asked to bound. */
export interface BodyLimit {
  /** a body larger than this many bytes comes back as NULL, with its size in body_bytes */
  maxBodyBytes?: number;
}

/** How rows become the body: a JSON array or object (maybe without null fields), or CSV. */
export interface BodyFormat {
  single: boolean;
  csv?: boolean;
  stripNulls?: boolean;
}

/** The names a select list answers with, in order: the CSV header. */
function outputNames(items: PlannedItem[]): string[] {
  return items.filter((item) => item.kind === 'column' || item.embed.items.length > 0).map((item) => item.as);
}

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * The aggregate over the rows `_r` that makes the body. CSV rows are PostgreSQL's own record
 * text (fields quoted and escaped as CSV does) without the parentheses, as PostgREST writes them.
 */
function bodyAggregate(format: BodyFormat, items: PlannedItem[], params: Params): string {
  if (format.csv) {
    const header = params.add(outputNames(items).map(csvField).join(','));
    return `${header}::text || chr(10) || coalesce(string_agg(substr(_r::text, 2, length(_r::text) - 2), chr(10)), '')`;
  }
  const json = format.single ? `(json_agg(_r) -> 0)` : `coalesce(json_agg(_r), '[]')`;
  return `${format.stripNulls ? `json_strip_nulls(${json})` : json}::text`;
}

/**
 * Assembles a statement from its CTEs and final select. With a body limit, the final select is
 * materialized once and its body measured inside PostgreSQL: an oversized body is replaced by
 * NULL, so the service never receives, buffers or parses it. (Data-modifying CTEs must stay at
 * the top level, which is why the limit is a CTE rather than a wrapping subquery.)
 */
function finish(params: Params, ctes: string[], final: string, columns: string[], limit: BodyLimit): Query {
  if (limit.maxBodyBytes === undefined) {
    const head = ctes.length > 0 ? `with ${ctes.join(', ')} ` : '';
    return { text: `${head}${final}`, values: params.values, columns };
  }
  const max = params.add(limit.maxBodyBytes);
  const others = columns.map((c) => `, _out.${c}`).join('');
  return {
    text:
      `with ${[...ctes, `_out as materialized (${final})`].join(', ')} ` +
      `select case when octet_length(_out.body) > ${max}::int then null else _out.body end as body, ` +
      `octet_length(_out.body) as body_bytes${others} from _out`,
    values: params.values,
    columns: [...columns, 'body_bytes'],
  };
}

export function quoteIdent(name: string): string {
  // The common case has no quote to double; skipping the regex matters on the hot path.
  return name.includes('"') ? `"${name.replace(/"/g, '""')}"` : `"${name}"`;
}

/** A schema-qualified name; `public` is written bare, so statements read as they always have. */
function qualified(schema: string, name: string): string {
  return `${schema === 'public' ? 'public' : quoteIdent(schema)}.${quoteIdent(name)}`;
}
const table = (t: { schema: string; name: string }) => qualified(t.schema, t.name);
const col = (alias: string, name: string) => `${alias}.${quoteIdent(name)}`;

function condition(alias: string, filter: ResolvedFilter, params: Params): string {
  if (filter.kind === 'embed-presence') {
    return `${filter.present ? '' : 'not '}${embedExists(alias, filter.embed, params)}`;
  }
  if (filter.kind !== 'condition') {
    const inner = filter.items.map((f) => condition(alias, f, params)).join(` ${filter.kind} `);
    return `${filter.negate ? 'not ' : ''}(${inner})`;
  }
  const sql = operatorSql(col(alias, filter.column), filter, (v) => params.add(v));
  return filter.negate ? `not (${sql})` : sql;
}

function whereClause(alias: string, filters: ResolvedFilter[], params: Params, extra: string[] = []): string {
  const parts = [...extra, ...filters.map((f) => condition(alias, f, params))];
  return parts.length > 0 ? ` where ${parts.join(' and ')}` : '';
}

function orderClause(alias: string, order: ResolvedOrder[], params: Params): string {
  if (order.length === 0) return '';
  return ` order by ${order
    .map((o) => {
      const target = o.jsonPath
        ? fieldSql(col(alias, o.column), o.jsonPath.columnType, o.jsonPath.steps, (v) => params.add(v)).sql
        : col(alias, o.column);
      return `${target} ${o.descending ? 'desc' : 'asc'}${o.nulls ? ` nulls ${o.nulls}` : ''}`;
    })
    .join(', ')}`;
}

function pagingClause(limit: number | undefined, offset: number | undefined, params: Params): string {
  return `${limit !== undefined ? ` limit ${params.add(limit)}` : ''}${offset ? ` offset ${params.add(offset)}` : ''}`;
}

function joinCondition(embed: EmbedPlan, childAlias: string, parentAlias: string): string[] {
  return embed.join.map((j) => `${col(childAlias, j.child)} = ${col(parentAlias, j.parent)}`);
}

function selectList(alias: string, items: PlannedItem[], params: Params, depth: number): string {
  // An empty list is valid SQL (`select from …`) and becomes `{}` in JSON.
  return items
    .filter((item) => item.kind === 'column' || item.embed.items.length > 0)
    .map((item) => {
      if (item.kind === 'column') {
        const value = item.jsonPath
          ? fieldSql(col(alias, item.column), item.jsonPath.columnType, item.jsonPath.steps, (v) =>
              params.add(v),
            ).sql
          : col(alias, item.column);
        return `${value}${item.cast ? `::${item.cast}` : ''} as ${quoteIdent(item.as)}`;
      }
      const e = item.embed;
      const childAlias = `t${depth + 1}`;
      const inner =
        `select ${selectList(childAlias, e.items, params, depth + 1)} from ${table(e.table)} ${childAlias}` +
        whereClause(childAlias, e.where, params, joinCondition(e, childAlias, alias));
      if (e.toOne) {
        return `(select row_to_json(_e) from (${inner} limit 1) _e) as ${quoteIdent(item.as)}`;
      }
      return (
        `coalesce((select json_agg(_e) from (${inner}${orderClause(childAlias, e.order, params)}` +
        `${pagingClause(e.limit, e.offset, params)}) _e), '[]'::json) as ${quoteIdent(item.as)}`
      );
    })
    .join(', ');
}

/** Whether the parent row has at least one embedded row matching the embed's filters. */
function embedExists(alias: string, embed: EmbedPlan, params: Params): string {
  const childAlias = 't9';
  return (
    `exists (select 1 from ${table(embed.table)} ${childAlias}` +
    `${whereClause(childAlias, embed.where, params, joinCondition(embed, childAlias, alias))})`
  );
}

/** `exists (…)` conditions that make !inner embeds filter their parents. */
function innerEmbedConditions(alias: string, items: PlannedItem[], params: Params): string[] {
  return items
    .filter((i): i is Extract<PlannedItem, { kind: 'embed' }> => i.kind === 'embed' && i.embed.inner)
    .map(({ embed }) => embedExists(alias, embed, params));
}

/** The FROM item (aliased t0) and any CTE it needs. */
function sourceSql(plan: ReadPlan, params: Params): { ctes: string[]; from: string } {
  if (plan.source.kind === 'table') return { ctes: [], from: `${table(plan.source.table)} t0` };
  // A CTE read twice (page and count) is evaluated once, so the function runs exactly once.
  return { ctes: [`_src as (select * from ${callSql(plan.source.call, params)})`], from: '_src t0' };
}

export function callSql(call: FunctionCall, params: Params): string {
  const name = qualified(call.fn.schema, call.fn.name);
  if (call.wholeBody !== undefined) {
    const type = call.fn.args[0]?.type ?? 'json';
    const json = type === 'json' || type === 'jsonb';
    return `${name}(${params.add(json ? JSON.stringify(call.wholeBody) : call.wholeBody)}::${type})`;
  }
  const args = call.args.map((a) => {
    // A row-type argument is filled from its JSON object with the row type's own conversions.
    const value = a.rowType
      ? `json_populate_record(null::${a.type}, ${params.add(a.value)}::json)`
      : `${params.add(a.value)}::${a.type}`;
    // An unnamed parameter (the only one its function has) is passed by position.
    return a.name === '' ? value : `${quoteIdent(a.name)} := ${value}`;
  });
  return `${name}(${args.join(', ')})`;
}

/** The page as one JSON text, its row count, and (optionally) the total count without paging. */
export function readQuery(plan: ReadPlan, options: BodyFormat & { count: boolean } & BodyLimit): Query {
  const params = new Params();
  const source = sourceSql(plan, params);
  const inner = innerEmbedConditions('t0', plan.items, params);
  const where = whereClause('t0', plan.where, params, inner);
  const page =
    `select ${selectList('t0', plan.items, params, 0)} from ${source.from}${where}` +
    `${orderClause('t0', plan.order, params)}${pagingClause(plan.limit, plan.offset, params)}`;
  const body = bodyAggregate(options, plan.items, params);
  const total = options.count ? `, (select count(*) from ${source.from}${where})::bigint as total` : '';
  return finish(
    params,
    source.ctes,
    `select ${body} as body, count(_r)::int as rows${total} from (${page}) _r`,
    options.count ? ['rows', 'total'] : ['rows'],
    options,
  );
}

/**
 * The rows a read would count, without paging or shaping: EXPLAIN of this statement gives the
 * planner's estimate of the total (Prefer: count=planned / estimated) without counting.
 */
export function countEstimateQuery(plan: ReadPlan): Query {
  const params = new Params();
  const source = sourceSql(plan, params);
  const inner = innerEmbedConditions('t0', plan.items, params);
  const where = whereClause('t0', plan.where, params, inner);
  const head = source.ctes.length > 0 ? `with ${source.ctes.join(', ')} ` : '';
  return { text: `${head}select 1 from ${source.from}${where}`, values: params.values, columns: [] };
}

function rowsSource(plan: WritePlan, params: Params): { from: string; value: (column: string) => string } {
  const rowsParam = params.add(JSON.stringify(plan.rows));
  // Defaults come from pg_get_expr() in the catalog, never from the request. With rows that
  // differ in their keys, each row evaluates every default once (in a correlated subquery that
  // is not flattened), whether it uses it or not: a sequence advances once per row, as it does
  // under PostgREST, so ids do not depend on which rows named their key.
  const withDefault = plan.uniform ? [] : plan.columns.filter((c) => plan.defaults.get(c));
  const defaults =
    withDefault.length > 0
      ? `, lateral (select ${withDefault.map((c, i) => `${plan.defaults.get(c)!} as d${i}`).join(', ')} ` +
        `where _x.v is not null offset 0) _d`
      : '';
  const from =
    `from json_array_elements(${rowsParam}::json) _x(v), ` +
    `lateral json_populate_record(null::${table(plan.table)}, _x.v) _p${defaults}`;
  const value = (column: string) => {
    if (plan.uniform) return `_p.${quoteIdent(column)}`;
    const index = withDefault.indexOf(column);
    const fallback = index >= 0 ? `_d.d${index}` : 'null';
    return `case when (_x.v::jsonb) ? ${params.add(column)} then _p.${quoteIdent(column)} else ${fallback} end`;
  };
  return { from, value };
}

/**
 * What a write returns: only the columns the response reads, or a bare 1 under return=minimal.
 * RETURNING * would need SELECT on every column and make the SELECT policies apply to the new
 * rows, so an insert into a table clients may write but not read would fail.
 */
function returningList(items: PlannedItem[], representation: boolean, prefix = ''): string {
  const columns = new Set<string>();
  if (representation) {
    for (const item of items) {
      if (item.kind === 'column') columns.add(item.column);
      else if (item.embed.items.length > 0) for (const j of item.embed.join) columns.add(j.parent);
    }
  }
  if (columns.size === 0) return 'returning 1';
  return `returning ${[...columns].map((c) => `${prefix}${quoteIdent(c)}`).join(', ')}`;
}

type WriteOptions = BodyFormat & { representation: boolean } & BodyLimit;

/** Name of the flag an upsert returns per row; no table column is likely to be called this. */
const INSERTED_FLAG = '"__tenantry_inserted"';

function returning(
  items: PlannedItem[],
  params: Params,
  format: BodyFormat,
  representation: boolean,
  countInserted = false,
): string {
  const inserted = countInserted
    ? `, (select count(*) from _w where _w.${INSERTED_FLAG})::int as inserted`
    : '';
  if (!representation) return `select null::text as body, count(*)::int as rows${inserted} from _w`;
  const body = bodyAggregate(format, items, params);
  return (
    `select ${body} as body, count(_r)::int as rows${inserted} ` +
    `from (select ${selectList('t0', items, params, 0)} from _w t0) _r`
  );
}

export function insertQuery(plan: WritePlan, items: PlannedItem[], options: WriteOptions): Query {
  const params = new Params();
  const columns = plan.columns.map(quoteIdent).join(', ');
  let sql: string;
  if (plan.columns.length === 0) {
    // Every row takes every default.
    sql = `insert into ${table(plan.table)} select from json_array_elements(${params.add(JSON.stringify(plan.rows))}::json)`;
  } else {
    const { from, value } = rowsSource(plan, params);
    sql = `insert into ${table(plan.table)} (${columns}) select ${plan.columns.map(value).join(', ')} ${from}`;
  }
  const merge = plan.conflict?.action === 'merge';
  if (plan.conflict) {
    const target = plan.conflict.columns.map(quoteIdent).join(', ');
    const others = plan.columns.filter((c) => !plan.conflict!.columns.includes(c));
    // With only key columns to write, a merge still "updates" (to the same values) so that the
    // existing rows come back, as they do with PostgREST.
    const updates = others.length > 0 ? others : plan.conflict.columns;
    sql += merge
      ? ` on conflict (${target}) do update set ${updates.map((c) => `${quoteIdent(c)} = excluded.${quoteIdent(c)}`).join(', ')}`
      : ` on conflict (${target}) do nothing`;
  }
  // xmax is 0 for a freshly inserted row and set for one the upsert updated: that tells a merge
  // that only updated (200) from one that created something (201).
  const flag = merge ? `, (xmax = 0) as ${INSERTED_FLAG}` : '';
  return finish(
    params,
    [`_w as (${sql} ${returningList(items, options.representation)}${flag})`],
    returning(items, params, options, options.representation, merge),
    merge ? ['rows', 'inserted'] : ['rows'],
    options,
  );
}

export function updateQuery(
  plan: WritePlan,
  where: ResolvedFilter[],
  items: PlannedItem[],
  options: WriteOptions,
): Query {
  const params = new Params();
  const rowParam = params.add(JSON.stringify(plan.rows[0]));
  const sets = plan.columns.map((c) => `${quoteIdent(c)} = _p.${quoteIdent(c)}`).join(', ');
  const sql =
    `update ${table(plan.table)} t0 set ${sets} ` +
    `from json_populate_record(null::${table(plan.table)}, ${rowParam}::json) _p` +
    `${whereClause('t0', where, params)} ${returningList(items, options.representation, 't0.')}`;
  return finish(
    params,
    [`_w as (${sql})`],
    returning(items, params, options, options.representation),
    ['rows'],
    options,
  );
}

export function deleteQuery(
  target: { schema: string; name: string },
  where: ResolvedFilter[],
  items: PlannedItem[],
  options: WriteOptions,
): Query {
  const params = new Params();
  const sql =
    `delete from ${table(target)} t0${whereClause('t0', where, params)} ` +
    returningList(items, options.representation, 't0.');
  return finish(
    params,
    [`_w as (${sql})`],
    returning(items, params, options, options.representation),
    ['rows'],
    options,
  );
}

/** A call whose result is a single value (scalar, composite or void), as JSON text. */
export function scalarCallQuery(call: FunctionCall, limit: BodyLimit = {}): Query {
  const params = new Params();
  return finish(params, [], `select to_json(${callSql(call, params)})::text as body`, [], limit);
}

/** A set-returning function of scalars: its values as a JSON array. */
export function scalarSetCallQuery(call: FunctionCall, limit: BodyLimit = {}): Query {
  const params = new Params();
  return finish(
    params,
    [],
    `select coalesce(json_agg(_v), '[]')::text as body, count(*)::int as rows from ${callSql(call, params)} _v`,
    ['rows'],
    limit,
  );
}
