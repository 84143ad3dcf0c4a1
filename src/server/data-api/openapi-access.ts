// In charge of what the OpenAPI description needs beyond the schema cache: which tables and
// functions of the exposed schema the caller's role may use (and how), and the comments on them.
// It is read as the caller, in one read-only message, so privileges are the role's own, exactly
// as PostgreSQL would judge its requests; rows and row-level security play no part.
import { statementTimeoutOf, type Pool } from '../db/pool.js';
import { runAsCaller, type Claims } from '../db/transactions.js';

export interface RelationAccess {
  name: string;
  description: string | null;
  select: boolean;
  insert: boolean;
  update: boolean;
  delete: boolean;
  /** comments on columns, by column name (only commented columns) */
  columnDescriptions: Record<string, string>;
  /** labels of enum-typed columns, by column name */
  columnEnums: Record<string, string[]>;
}

export interface FunctionAccess {
  name: string;
  /** format_type() of the input arguments, as the schema cache lists them */
  argTypes: string[];
  description: string | null;
}

export interface SchemaAccess {
  description: string | null;
  relations: RelationAccess[];
  functions: FunctionAccess[];
}

// pg_relation_is_updatable() bits: 8 insert, 4 update, 16 delete. A privilege on a view that
// PostgreSQL cannot write through is no use to a client, so both must hold for a verb to show.
// Listed like PostgREST lists them: relations the role owns or holds any privilege on.
const ACCESS_SQL = `
with rel as (
  select c.oid, c.relname, c.relkind, pg_relation_is_updatable(c.oid, false) as writable
  from pg_class c
  where c.relnamespace = to_regnamespace($1) and c.relkind in ('r', 'p', 'v', 'm', 'f')
    and not c.relispartition
    and (pg_has_role(c.relowner, 'USAGE')
         or has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
         or has_any_column_privilege(c.oid, 'SELECT, INSERT, UPDATE, REFERENCES'))
)
select json_build_object(
  'description', obj_description(to_regnamespace($1), 'pg_namespace'),
  'relations', coalesce((
    select json_agg(json_build_object(
      'name', rel.relname,
      'description', obj_description(rel.oid, 'pg_class'),
      'select', has_table_privilege(rel.oid, 'SELECT') or has_any_column_privilege(rel.oid, 'SELECT'),
      'insert', (rel.writable & 8 = 8) and (has_table_privilege(rel.oid, 'INSERT') or has_any_column_privilege(rel.oid, 'INSERT')),
      'update', (rel.writable & 4 = 4) and (has_table_privilege(rel.oid, 'UPDATE') or has_any_column_privilege(rel.oid, 'UPDATE')),
      'delete', (rel.writable & 16 = 16) and has_table_privilege(rel.oid, 'DELETE'),
      'columnDescriptions', coalesce((
        select json_object_agg(a.attname, d.description)
        from pg_attribute a join pg_description d
          on d.objoid = rel.oid and d.classoid = 'pg_class'::regclass and d.objsubid = a.attnum
        where a.attrelid = rel.oid and a.attnum > 0 and not a.attisdropped), '{}'::json),
      'columnEnums', coalesce((
        select json_object_agg(a.attname,
                 array(select e.enumlabel from pg_enum e where e.enumtypid = t.oid order by e.enumsortorder))
        from pg_attribute a join pg_type t on t.oid = a.atttypid
        where a.attrelid = rel.oid and a.attnum > 0 and not a.attisdropped and t.typtype = 'e'), '{}'::json)
    ) order by rel.relname) from rel), '[]'::json),
  'functions', coalesce((
    select json_agg(json_build_object(
      'name', p.proname,
      'argTypes', array(select format_type(t, null) from unnest(p.proargtypes) t),
      'description', obj_description(p.oid, 'pg_proc')
    ) order by p.proname, p.oid)
    from pg_proc p
    where p.pronamespace = to_regnamespace($1) and p.prokind = 'f' and has_function_privilege(p.oid, 'EXECUTE')), '[]'::json)
) as access`;

/** Reads, as the caller, which relations and functions of `schemaName` it may use. */
export async function readSchemaAccess(
  pool: Pool,
  claims: Claims,
  schemaName: string,
): Promise<SchemaAccess> {
  const row = await runAsCaller(
    pool,
    claims,
    { text: ACCESS_SQL, values: [schemaName] },
    { readOnly: true, readTimeoutMs: statementTimeoutOf(pool) + 2000 },
  );
  return row?.access as SchemaAccess;
}
