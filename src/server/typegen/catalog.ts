// In charge of reading what the type generator describes from pg_catalog: the relations, columns,
// foreign keys, functions and types of the schemas asked for (and the types they refer to),
// as plain data. Read with the connecting role's own rights; every value is a parameter.
import type { Pool } from '../db/pool.js';
import {
  relationshipsThroughViews,
  resolveViewColumns,
  type TableKey,
  type ViewInfo,
} from './view-relationships.js';

export interface CatalogRelation {
  id: number;
  schema: string;
  name: string;
  /** r table, p partitioned table, f foreign table, v view, m materialized view */
  kind: 'r' | 'p' | 'f' | 'v' | 'm';
  /** a view PostgreSQL can update and delete through */
  updatable: boolean;
}

export interface CatalogColumn {
  relationId: number;
  name: string;
  /** the type's name in pg_type (a domain's base type): int4, _text, user_status… */
  format: string;
  nullable: boolean;
  defaultValue: string | null;
  /** a identity GENERATED ALWAYS, d BY DEFAULT, '' none */
  identity: '' | 'a' | 'd';
  /** may be written through a view (what Insert and Update of an updatable view allow) */
  updatable: boolean;
}

export interface CatalogRelationship {
  foreignKeyName: string;
  schema: string;
  relation: string;
  columns: string[];
  isOneToOne: boolean;
  referencedSchema: string;
  referencedRelation: string;
  referencedColumns: string[];
}

export interface CatalogArgument {
  /** in, out, inout, variadic, table */
  mode: string;
  name: string;
  typeId: number;
  hasDefault: boolean;
}

export interface CatalogFunction {
  schema: string;
  name: string;
  args: CatalogArgument[];
  /** pg_get_function_arguments(): a computed field's is just the row type's name */
  argumentTypes: string;
  /** pg_get_function_result() */
  returnType: string;
  returnTypeId: number;
  /** the relation whose rows the function returns, if any */
  returnTypeRelationId: number | null;
  returnsSet: boolean;
  /** the planner's row estimate of a set-returning function */
  rows: number | null;
}

export interface CatalogType {
  id: number;
  name: string;
  schema: string;
  enums: string[];
  /** attributes of a composite type (CREATE TYPE … AS) */
  attributes: { name: string; typeId: number }[];
  /** the relation of a row type */
  relationId: number | null;
}

export interface Catalog {
  schemas: string[];
  relations: CatalogRelation[];
  columns: CatalogColumn[];
  relationships: CatalogRelationship[];
  functions: CatalogFunction[];
  types: CatalogType[];
}

const RELATIONS_SQL = `
select c.oid::int8 as id, n.nspname as schema, c.relname as name, c.relkind as kind,
       case when c.relkind = 'v' then pg_relation_is_updatable(c.oid, false) & 20 = 20 else false end as updatable
from pg_class c join pg_namespace n on n.oid = c.relnamespace
where n.nspname = any($1::text[]) and c.relkind in ('r', 'p', 'f', 'v', 'm')`;

const COLUMNS_SQL = `
select c.oid::int8 as "relationId", a.attname as name, coalesce(bt.typname, t.typname) as format,
       not (a.attnotnull or (t.typtype = 'd' and t.typnotnull)) as nullable,
       case when a.atthasdef then pg_get_expr(d.adbin, d.adrelid) end as "defaultValue",
       a.attidentity::text as identity,
       -- Asked of views only: for a foreign table it would need its wrapper's handler.
       case when c.relkind = 'v' then pg_column_is_updatable(c.oid, a.attnum, false) else c.relkind <> 'm' end
         as updatable
from pg_attribute a
join pg_class c on c.oid = a.attrelid
join pg_namespace n on n.oid = c.relnamespace
join pg_type t on t.oid = a.atttypid
left join pg_type bt on t.typtype = 'd' and bt.oid = t.typbasetype
left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
where n.nspname = any($1::text[]) and c.relkind in ('r', 'p', 'f', 'v', 'm')
  and a.attnum > 0 and not a.attisdropped`;

// A foreign key is one-to-one when its columns are exactly a primary or unique key of its table.
const RELATIONSHIPS_SQL = `
select con.conname as "foreignKeyName", n.nspname as schema, c.relname as relation,
       array(select a.attname::text from unnest(con.conkey) with ordinality k(num, ord)
             join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.num order by k.ord) as columns,
       exists (select 1 from pg_constraint u
               where u.conrelid = con.conrelid and u.contype in ('p', 'u')
                 and u.conkey @> con.conkey and u.conkey <@ con.conkey) as "isOneToOne",
       fn.nspname as "referencedSchema", fc.relname as "referencedRelation",
       array(select a.attname::text from unnest(con.confkey) with ordinality k(num, ord)
             join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.num order by k.ord)
         as "referencedColumns",
       con.conrelid::int8 as "tableId", con.confrelid::int8 as "referencedId",
       con.conkey::int[] as "keyNumbers", con.confkey::int[] as "referencedNumbers"
from pg_constraint con
join pg_class c on c.oid = con.conrelid
join pg_namespace n on n.oid = c.relnamespace
join pg_class fc on fc.oid = con.confrelid
join pg_namespace fn on fn.oid = fc.relnamespace
where con.contype = 'f' and con.conparentid = 0 and n.nspname = any($1::text[])`;

const FUNCTIONS_SQL = `
select n.nspname as schema, p.proname as name,
       coalesce((
         select json_agg(json_build_object(
                  'mode', case m when 'i' then 'in' when 'o' then 'out' when 'b' then 'inout'
                               when 'v' then 'variadic' else 'table' end,
                  'name', coalesce(nm, ''), 'typeId', ty::int8,
                  'hasDefault', m in ('i', 'b', 'v') and inpos > p.pronargs - p.pronargdefaults) order by ord)
         from (
           select u.m, u.nm, u.ty, u.ord,
                  count(*) filter (where u.m in ('i', 'b', 'v')) over (order by u.ord) as inpos
           from unnest(coalesce(p.proargmodes::text[], array_fill('i'::text, array[p.pronargs])),
                       coalesce(p.proargnames, array_fill(''::text, array[cardinality(coalesce(p.proallargtypes, p.proargtypes))])),
                       coalesce(p.proallargtypes, p.proargtypes::oid[]))
                with ordinality u(m, nm, ty, ord)
         ) args), '[]'::json) as args,
       pg_get_function_arguments(p.oid) as "argumentTypes",
       pg_get_function_result(p.oid) as "returnType",
       p.prorettype::int8 as "returnTypeId",
       nullif(rt.typrelid::int8, 0) as "returnTypeRelationId",
       p.proretset as "returnsSet",
       case when p.proretset then nullif(p.prorows, 0)::float8 end as rows
from pg_proc p
join pg_namespace n on n.oid = p.pronamespace
join pg_type rt on rt.oid = p.prorettype
where n.nspname = any($1::text[]) and p.prokind = 'f'
  and p.prorettype not in ('trigger'::regtype, 'event_trigger'::regtype)`;

// Every type a column, argument or result may name: base, array, enum, composite and row types.
const TYPES_SQL = `
select t.oid::int8 as id, t.typname as name, n.nspname as schema,
       coalesce((select json_agg(e.enumlabel order by e.enumsortorder) from pg_enum e where e.enumtypid = t.oid),
                '[]'::json) as enums,
       coalesce((select json_agg(json_build_object('name', a.attname, 'typeId', a.atttypid::int8) order by a.attnum)
                 from pg_class c join pg_attribute a on a.attrelid = c.oid
                 where c.oid = t.typrelid and c.relkind = 'c' and a.attnum > 0 and not a.attisdropped),
                '[]'::json) as attributes,
       nullif(t.typrelid::int8, 0) as "relationId"
from pg_type t join pg_namespace n on n.oid = t.typnamespace
where t.typrelid = 0 or (select c.relkind in ('c', 'r', 'v', 'm', 'p') from pg_class c where c.oid = t.typrelid)`;

// The stored query of every view (views over views are followed whatever their schema).
const VIEW_TREES_SQL = `
select c.oid::int8 as id, r.ev_action::text as tree
from pg_class c
join pg_namespace n on n.oid = c.relnamespace
join pg_rewrite r on r.ev_class = c.oid and r.rulename = '_RETURN'
where c.relkind in ('v', 'm') and n.nspname not in ('pg_catalog', 'information_schema')`;

const VIEW_COLUMNS_SQL = `
select a.attrelid::int8 as "viewId", a.attnum as num, a.attname as name
from pg_attribute a
where a.attrelid = any($1::oid[]) and a.attnum > 0 and not a.attisdropped`;

/** Reads the catalog for `schemas` in one read-only transaction, so the parts agree. */
export async function readCatalog(pool: Pool, schemas: string[]): Promise<Catalog> {
  const client = await pool.connect();
  try {
    await client.query('begin transaction isolation level repeatable read read only');
    const run = async <T>(sql: string, values: unknown[] = [schemas]) =>
      (await client.query(sql, values)).rows as T[];
    const relations = await run<CatalogRelation & { id: string }>(RELATIONS_SQL);
    const columns = await run<CatalogColumn & { relationId: string }>(COLUMNS_SQL);
    const keys = await run<
      CatalogRelationship & {
        tableId: string;
        referencedId: string;
        keyNumbers: number[];
        referencedNumbers: number[];
      }
    >(RELATIONSHIPS_SQL);
    const trees = await run<{ id: string; tree: string }>(VIEW_TREES_SQL, []);
    const functions = await run<
      CatalogFunction & { returnTypeId: string; returnTypeRelationId: string | null }
    >(FUNCTIONS_SQL);
    const types = await run<CatalogType & { id: string; relationId: string | null }>(TYPES_SQL, []);
    const existing = await run<{ name: string }>(
      `select nspname as name from pg_namespace where nspname = any($1::text[])`,
    );
    const shownViews = relations.filter((r) => r.kind === 'v' || r.kind === 'm');
    const viewColumns = await run<{ viewId: string; num: number; name: string }>(VIEW_COLUMNS_SQL, [
      shownViews.map((v) => v.id),
    ]);
    await client.query('commit');
    // int8 arrives as text; these ids are oids, well within a number.
    const id = (v: string | number | null) => (v === null ? null : Number(v));
    return {
      schemas: existing.map((s) => s.name),
      relations: relations.map((r) => ({ ...r, id: Number(r.id) })),
      columns: columns.map((c) => ({ ...c, relationId: Number(c.relationId) })),
      relationships: relationships(keys, trees, shownViews, viewColumns),
      functions: functions.map((f) => ({
        ...f,
        returnTypeId: Number(f.returnTypeId),
        returnTypeRelationId: id(f.returnTypeRelationId),
        args: f.args.map((a) => ({ ...a, typeId: Number(a.typeId) })),
      })),
      types: types.map((t) => ({
        ...t,
        id: Number(t.id),
        relationId: id(t.relationId),
        attributes: t.attributes.map((a) => ({ ...a, typeId: Number(a.typeId) })),
      })),
    };
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** Foreign keys between tables, and the relationships they give through the views shown. */
function relationships(
  keys: (CatalogRelationship & {
    tableId: string;
    referencedId: string;
    keyNumbers: number[];
    referencedNumbers: number[];
  })[],
  trees: { id: string; tree: string }[],
  views: { id: string | number; schema: string; name: string }[],
  columns: { viewId: string; num: number; name: string }[],
): CatalogRelationship[] {
  const tableKeys: TableKey[] = keys.map(
    ({ tableId, referencedId, keyNumbers, referencedNumbers, ...relationship }) => ({
      relationship,
      tableId: Number(tableId),
      referencedId: Number(referencedId),
      keyNumbers,
      referencedNumbers,
    }),
  );
  const infos: ViewInfo[] = views.map((v) => ({
    id: Number(v.id),
    schema: v.schema,
    name: v.name,
    columns: new Map(columns.filter((c) => Number(c.viewId) === Number(v.id)).map((c) => [c.num, c.name])),
  }));
  const sources = resolveViewColumns(new Map(trees.map((t) => [Number(t.id), t.tree])));
  return [...tableKeys.map((k) => k.relationship), ...relationshipsThroughViews(tableKeys, infos, sources)];
}
