// In charge of what the database advisor (`npm run db:lint`) reports and what a rule is: a finding
// names its rule, its level, the database object and a one-sentence fix; a rule reads the catalog
// through the context it is given and returns findings.
import type { Queryable } from '../db/pool.js';

/** ERROR fails the command (exit 1); WARN and INFO are advice. */
export type Level = 'ERROR' | 'WARN' | 'INFO';

export const LEVELS: readonly Level[] = ['ERROR', 'WARN', 'INFO'];

export interface Finding {
  /** the rule's id, e.g. rls_disabled_in_exposed_schema */
  id: string;
  level: Level;
  /** the object at fault, qualified: a table, a policy on a table, a function, a foreign key, a file */
  object: string;
  /** what is wrong with this object, in one sentence */
  detail: string;
  /** what to do about it, in one sentence */
  fix: string;
}

export interface AdvisorContext {
  /** a connection inside a read-only transaction whose search_path is empty (every name deparses qualified) */
  db: Queryable;
  /** the schemas the data API exposes (DATA_API_SCHEMAS) */
  schemas: string[];
  /** the generated types file the exposed tables are compared with */
  typesPath: string;
}

export interface Rule {
  id: string;
  level: Level;
  /** what the rule detects, for the documentation and `--rules` */
  what: string;
  /** its fix in general terms (a finding's own fix names the object) */
  fix: string;
  check(context: AdvisorContext): Promise<Finding[]>;
}

/** The schemas no rule looks into: PostgreSQL's own. */
export const SYSTEM_SCHEMAS_SQL = `n.nspname not in ('pg_catalog', 'information_schema') and n.nspname !~ '^pg_'`;

/** True (as SQL, for pg_class c) when the object belongs to an extension, which the project does not write. */
export const NOT_FROM_EXTENSION_SQL = `not exists (select 1 from pg_catalog.pg_depend d
  where d.classid = 'pg_catalog.pg_class'::regclass and d.objid = c.oid and d.deptype = 'e')`;

/**
 * True (as SQL, for pg_class c in pg_namespace n) when a request role can reach the relation through
 * the data API: it may use the schema and holds a privilege on the table or on one of its columns.
 */
export const REACHABLE_SQL = `exists (select 1 from pg_catalog.pg_roles r
    where r.rolname in ('anon', 'authenticated')
      and pg_catalog.has_schema_privilege(r.oid, n.oid, 'USAGE')
      and (pg_catalog.has_table_privilege(r.oid, c.oid, 'SELECT, INSERT, UPDATE, DELETE')
           or pg_catalog.has_any_column_privilege(r.oid, c.oid, 'SELECT, INSERT, UPDATE')))`;

/** As REACHABLE_SQL, for reading only (views). */
export const READABLE_SQL = `exists (select 1 from pg_catalog.pg_roles r
    where r.rolname in ('anon', 'authenticated')
      and pg_catalog.has_schema_privilege(r.oid, n.oid, 'USAGE')
      and pg_catalog.has_any_column_privilege(r.oid, c.oid, 'SELECT'))`;
