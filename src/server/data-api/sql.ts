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
  private aliases = 0;
  /** a table alias no other part of the statement uses (existence tests nest) */
  alias(): string {
    return `_x${++this.aliases}`;
  }
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
function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/**
 * The aggregate over the rows `_r` that makes the body. CSV rows are PostgreSQL's own record
 * text (fields quoted and escaped as CSV does) without the parentheses, as PostgREST writes them.
 */
function bodyAggregate(format: BodyFormat, list: Output[], params: Params): string {
  if (format.csv) {
    const header = params.add(list.map((o) => csvField(o.name)).join(','));
    return `${header}::text || chr(10) || coalesce(string_agg(substr(_r::text, 2, length(_r::text) - 2), chr(10)), '')`;
  }
  const json = format.single ? `(json_agg(_r) -> 0)` : `coalesce(json_agg(_r), '[]')`;
  return `${format.stripNulls ? `json_strip_nulls(${json})` : json}::text`;
}

/**
 * Assembles a statement from its CTEs and final select. With a body limit, the body is measured
 * inside PostgreSQL: an oversized body is replaced by NULL, so the service never receives,
 * buffers or parses it. The final select is read through a subquery that `offset 0` keeps whole,
 * so the body is computed once and passed on row by row; a materialized CTE would first copy it
 * into a tuplestore, which spills to a temporary file beyond work_mem: an oversized body was
 * written to disk only to be refused. (Data-modifying CTEs must stay at the top level, which is
 * why they remain CTEs and only the final select is wrapped.)
 */
function finish(params: Params, ctes: string[], final: string, columns: string[], limit: BodyLimit): Query {
  const head = ctes.length > 0 ? `with ${ctes.join(', ')} ` : '';
  if (limit.maxBodyBytes === undefined) {
    return { text: `${head}${final}`, values: params.values, columns };
  }
  const max = params.add(limit.maxBodyBytes);
  const others = columns.map((c) => `, _out.${c}`).join('');
  return {
    text:
      `${head}select case when octet_length(_out.body) > ${max}::int then null else _out.body end as body, ` +
      `octet_length(_out.body) as body_bytes${others} from (${final} offset 0) _out`,
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

/**
 * A computed field: the function applied to the row (cast, so a write's returned row fits too).
 * The function lives in the schema of the table it takes.
 */
const computedCol = (alias: string, fn: string, rowTable: string, schema = 'public') =>
  `${qualified(schema, fn)}(${alias}::${qualified(schema, rowTable)})`;

/** A column, or the computed field of that name. */
const field = (alias: string, name: string, computed: string | undefined) =>
  computed !== undefined ? computedCol(alias, name, computed) : col(alias, name);

function condition(alias: string, filter: ResolvedFilter, params: Params): string {
  if (filter.kind === 'embed-presence') {
    return `${filter.present ? '' : 'not '}${embedExists(alias, filter.embed, params)}`;
  }
  if (filter.kind !== 'condition') {
    const inner = filter.items.map((f) => condition(alias, f, params)).join(` ${filter.kind} `);
    return `${filter.negate ? 'not ' : ''}(${inner})`;
  }
  const sql = operatorSql(field(alias, filter.column, filter.computed), filter, (v) => params.add(v));
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
      let target = o.jsonPath
        ? fieldSql(col(alias, o.column), o.jsonPath.columnType, o.jsonPath.steps, (v) => params.add(v)).sql
        : field(alias, o.column, o.computed);
      if (o.embed) {
        // A to-one embed's column: the one embedded row's value, found the way the embed finds it.
        const source = embedSource(o.embed, '_o', alias);
        target = `(select ${col('_o', o.column)} from ${source.from}${whereClause('_o', o.embed.where, params, source.conditions)} limit 1)`;
      }
      return `${target} ${o.descending ? 'desc' : 'asc'}${o.nulls ? ` nulls ${o.nulls}` : ''}`;
    })
    .join(', ')}`;
}

function pagingClause(limit: number | undefined, offset: number | undefined, params: Params): string {
  return `${limit !== undefined ? ` limit ${params.add(limit)}` : ''}${offset ? ` offset ${params.add(offset)}` : ''}`;
}

/** Where an embed's rows come from, and how they are tied to the parent row. */
function embedSource(
  embed: EmbedPlan,
  childAlias: string,
  parentAlias: string,
): { from: string; conditions: string[] } {
  if (embed.fn) {
    const call = computedCol(parentAlias, embed.fn.name, embed.fn.argTable, embed.table.schema);
    return { from: `${call} ${childAlias}`, conditions: [] };
  }
  const from = `${table(embed.table)} ${childAlias}`;
  if (embed.junction) {
    const j = `${childAlias}j`;
    return {
      from: `${from}, ${qualified(embed.table.schema, embed.junction.table)} ${j}`,
      conditions: [
        ...embed.junction.child.map((p) => `${col(j, p.junction)} = ${col(childAlias, p.child)}`),
        ...embed.junction.parent.map((p) => `${col(j, p.junction)} = ${col(parentAlias, p.parent)}`),
      ],
    };
  }
  return {
    from,
    conditions: embed.join.map((j) => `${col(childAlias, j.child)} = ${col(parentAlias, j.parent)}`),
  };
}

/** One output column of a select list: its expression, key, and whether it aggregates. */
interface Output {
  expr: string;
  name: string;
  aggregate: boolean;
  /** the value is JSON built here (an embed), which the body holds verbatim */
  json?: boolean;
}

/** The body limit's parameter, added to the statement when first asked for. */
type EarlyStop = () => string;

/**
 * The body limit's parameter for stopping early, or undefined: without a limit, and when nulls
 * are stripped from the finished body (which can make it smaller than the values it was built
 * from).
 */
function earlyStop(options: BodyFormat & BodyLimit, params: Params): EarlyStop | undefined {
  const { maxBodyBytes } = options;
  if (maxBodyBytes === undefined || options.stripNulls === true) return undefined;
  // Added on first use: a parameter the statement never mentions has no type and is an error.
  let placeholder: string | undefined;
  return () => (placeholder ??= params.add(maxBodyBytes));
}

/**
 * The rows `rows` under the alias `alias`, for an aggregate to turn into JSON. With a body limit
 * (`stop`), each row passes a running total of the sizes of its JSON values (its embeds), and the
 * statement stops (data_api.response_too_large, SQLSTATE TN413, answered as TNTRY413) as soon as
 * that total is over the limit. The body holds each of those values verbatim, with at least four more
 * characters (its key's quotes, the colon, a comma or brace), so the total is never more than the
 * body would be: nothing that fits is refused early. Without the early stop, embeds multiplied by
 * embeds build a body of any size before it is measured; with it, PostgreSQL stops after about
 * the limit's worth of work. (The window keeps only the current row; its order is the rows'.)
 */
function guardedRows(
  rows: string,
  alias: string,
  out: Output[],
  stop: EarlyStop | undefined,
  depth: number,
): string {
  const single = (name: string) => out.filter((o) => o.name === name).length === 1;
  const sized = out.filter((o) => o.json && single(o.name));
  if (stop === undefined || sized.length === 0) return `(${rows}) ${alias}`;
  const max = stop();
  const q = `_q${depth}`;
  const g = `_g${depth}`;
  const size = sized.map((o) => `coalesce(pg_column_size(${q}.${quoteIdent(o.name)}), 0)`).join(' + ');
  return (
    `(select ${q} as ${alias}, sum(${size}) over (rows between unbounded preceding and current row) as _n ` +
    `from (${rows}) ${q}) ${g} ` +
    `where case when ${g}._n > ${max}::bigint then data_api.response_too_large(${g}._n, ${max}::bigint) else true end`
  );
}

/**
 * The top-level rows `_r` the body is made of. A `.single()` body stops early only inside its
 * embeds: several rows there must still answer PGRST116, not TNTRY413.
 */
function bodyRows(rows: string, list: Output[], format: BodyFormat, stop: EarlyStop | undefined): string {
  return guardedRows(rows, '_r', list, format.single ? undefined : stop, 0);
}

function outputs(
  alias: string,
  items: PlannedItem[],
  params: Params,
  depth: number,
  /** the body limit, when embedded arrays are to stop early at it */
  stop?: EarlyStop,
): Output[] {
  const out: Output[] = [];
  for (const item of items) {
    if (item.kind === 'count') {
      out.push({ expr: `count(*)${item.cast ? `::${item.cast}` : ''}`, name: item.as, aggregate: true });
      continue;
    }
    if (item.kind === 'column') {
      const value = item.jsonPath
        ? fieldSql(col(alias, item.column), item.jsonPath.columnType, item.jsonPath.steps, (v) =>
            params.add(v),
          ).sql
        : field(alias, item.column, item.computed);
      let expr = `${value}${item.cast ? `::${item.cast}` : ''}`;
      if (item.aggregate)
        expr = `${item.aggregate}(${expr})${item.aggregateCast ? `::${item.aggregateCast}` : ''}`;
      out.push({ expr, name: item.as, aggregate: item.aggregate !== undefined });
      continue;
    }
    const e = item.embed;
    // An empty embed (`rel()`) only filters; it is not part of the output.
    if (e.items.length === 0) continue;
    const childAlias = `t${depth + 1}`;
    const source = embedSource(e, childAlias, alias);
    // An !inner embed inside this one drops this one's rows that have no match.
    const nested = innerEmbedConditions(childAlias, e.items, params);
    const where = whereClause(childAlias, e.where, params, [...source.conditions, ...nested]);
    const children = outputs(childAlias, e.items, params, depth + 1, stop);
    if (item.spread) {
      // Spread: each embedded column becomes a column of the parent; from a to-many embed, an
      // array of its values.
      for (const o of children) {
        const expr = e.toOne
          ? `(select ${o.expr} from ${source.from}${where} limit 1)`
          : `(select coalesce(json_agg(_s.v), '[]'::json) from (select ${o.expr} as v from ${source.from}${where}` +
            `${orderClause(childAlias, e.order, params)}${pagingClause(e.limit, e.offset, params)}) _s)`;
        out.push({ expr, name: o.name, aggregate: false, json: !e.toOne || o.json === true });
      }
      continue;
    }
    const inner = `select ${listSql(children)} from ${source.from}${where}${groupBy(children)}`;
    const expr = e.toOne
      ? `(select row_to_json(_e) from (${inner} limit 1) _e)`
      : `coalesce((select json_agg(_e) from ${guardedRows(
          `${inner}${orderClause(childAlias, e.order, params)}${pagingClause(e.limit, e.offset, params)}`,
          '_e',
          children,
          stop,
          depth + 1,
        )}), '[]'::json)`;
    out.push({ expr, name: item.as, aggregate: false, json: true });
  }
  return out;
}

function listSql(out: Output[]): string {
  // An empty list is valid SQL (`select from …`) and becomes `{}` in JSON.
  return out.map((o) => `${o.expr} as ${quoteIdent(o.name)}`).join(', ');
}

/** With aggregates in the list, the other outputs are the groups (by position). */
function groupBy(out: Output[]): string {
  if (!out.some((o) => o.aggregate)) return '';
  const keys = out.flatMap((o, i) => (o.aggregate ? [] : [String(i + 1)]));
  return keys.length > 0 ? ` group by ${keys.join(', ')}` : '';
}

/**
 * Whether the parent row has at least one embedded row matching the embed's filters, and (for
 * its own !inner embeds) one of theirs, at any depth.
 */
function embedExists(alias: string, embed: EmbedPlan, params: Params): string {
  const child = params.alias();
  const source = embedSource(embed, child, alias);
  const nested = innerEmbedConditions(child, embed.items, params);
  return `exists (select 1 from ${source.from}${whereClause(child, embed.where, params, [...source.conditions, ...nested])})`;
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
  const stop = earlyStop(options, params);
  const list = outputs('t0', plan.items, params, 0, stop);
  const page =
    `select ${listSql(list)} from ${source.from}${where}${groupBy(list)}` +
    `${orderClause('t0', plan.order, params)}${pagingClause(plan.limit, plan.offset, params)}`;
  const body = bodyAggregate(options, list, params);
  const total = options.count ? `, (select count(*) from ${source.from}${where})::bigint as total` : '';
  return finish(
    params,
    source.ctes,
    `select ${body} as body, count(_r)::int as rows${total} ` + `from ${bodyRows(page, list, options, stop)}`,
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
      // A computed field or relationship takes the whole row.
      if ((item.kind === 'column' && item.computed) || (item.kind === 'embed' && item.embed.fn)) {
        return `returning ${prefix}*`;
      }
      if (item.kind === 'column') columns.add(item.column);
      else if (item.kind === 'embed' && item.embed.items.length > 0) {
        for (const j of item.embed.join) columns.add(j.parent);
        for (const j of item.embed.junction?.parent ?? []) columns.add(j.parent);
      }
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
  format: BodyFormat & BodyLimit,
  representation: boolean,
  countInserted = false,
  /** the table's columns, when the whole row was returned beside the upsert's flag */
  rowColumns?: string[],
): string {
  const inserted = countInserted
    ? `, (select count(*) from _w where _w.${INSERTED_FLAG})::int as inserted`
    : '';
  if (!representation) return `select null::text as body, count(*)::int as rows${inserted} from _w`;
  const stop = earlyStop(format, params);
  const list = outputs('t0', items, params, 0, stop);
  const body = bodyAggregate(format, list, params);
  return (
    `select ${body} as body, count(_r)::int as rows${inserted} ` +
    `from ${bodyRows(`select ${listSql(list)} from ${rowSource(rowColumns)} t0${groupBy(list)}`, list, format, stop)}`
  );
}

/** The returned rows; without the upsert's flag when they must be whole rows of the table. */
function rowSource(rowColumns: string[] | undefined): string {
  return rowColumns ? `(select ${rowColumns.map((c) => `_w.${quoteIdent(c)}`).join(', ')} from _w)` : '_w';
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
  const returned = returningList(items, options.representation);
  const wholeRows = merge && returned === 'returning *' ? [...plan.table.columns.keys()] : undefined;
  return finish(
    params,
    [`_w as (${sql} ${returned}${flag})`],
    returning(items, params, options, options.representation, merge, wholeRows),
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
