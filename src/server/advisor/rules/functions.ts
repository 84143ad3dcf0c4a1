// In charge of security definer functions, which run with their owner's rights and skip the
// caller's row-level security: each must pin its search_path to schemas callers cannot create
// objects in (else a caller's object of the same name runs with those rights), and none in an
// exposed schema may be callable by anon (anyone with the public key, over /rest/v1/rpc).
import type { Queryable } from '../../db/pool.js';
import { SYSTEM_SCHEMAS_SQL, type Rule } from '../finding.js';

const FUNCTION_OBJECT_SQL = `format('%I.%I(%s)', n.nspname, p.proname, pg_catalog.pg_get_function_identity_arguments(p.oid))`;
const NOT_FROM_EXTENSION_SQL = `not exists (select 1 from pg_catalog.pg_depend d
  where d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')`;

interface DefinerFunction {
  object: string;
  /** the pinned search_path's schemas, or null when none is set */
  path: string[] | null;
  /** the schemas of that path in which anon or authenticated (PUBLIC's grants included) may create objects */
  writable: string[];
}

async function definerFunctions(db: Queryable): Promise<DefinerFunction[]> {
  const { rows } = await db.query<DefinerFunction>(
    `with f as (
       select ${FUNCTION_OBJECT_SQL} as object,
              (select pg_catalog.string_to_array(substr(c, length('search_path=') + 1), ', ')
               from unnest(p.proconfig) c where c like 'search_path=%') as path
       from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
       where p.prosecdef and ${SYSTEM_SCHEMAS_SQL} and ${NOT_FROM_EXTENSION_SQL}
     )
     select f.object, f.path,
            array(select s.nspname::text from pg_catalog.pg_namespace s
                  where s.nspname = any (select trim(both '"' from e) from unnest(f.path) e)
                    and exists (select 1 from pg_catalog.pg_roles r
                                where r.rolname in ('anon', 'authenticated')
                                  and pg_catalog.has_schema_privilege(r.oid, s.oid, 'CREATE'))
                  order by 1) as writable
     from f order by 1`,
  );
  return rows;
}

export const definerSearchPath: Rule = {
  id: 'security_definer_search_path',
  level: 'ERROR',
  what: 'A security definer function without a pinned search_path, or pinned to a schema where the request roles may create objects: a caller’s table, function or operator of the same name would run with the owner’s rights.',
  fix: "Pin the function's search_path to '' (and qualify every name in its body) or to schemas only the owner can create objects in.",
  async check({ db }) {
    const findings = [];
    for (const fn of await definerFunctions(db)) {
      if (fn.path !== null && fn.writable.length === 0) continue;
      const detail =
        fn.path === null
          ? `${fn.object} is security definer and resolves names through the caller's search_path.`
          : `${fn.object} is security definer and its search_path includes ${fn.writable.join(', ')}, where anon or authenticated may create objects.`;
      findings.push({
        id: this.id,
        level: this.level,
        object: fn.object,
        detail,
        fix: `alter function ${fn.object} set search_path = ''; and qualify every name in its body.`,
      });
    }
    return findings;
  },
};

export const definerCallableByAnon: Rule = {
  id: 'security_definer_function_anon',
  level: 'ERROR',
  what: 'A security definer function in an exposed schema that anon may execute: anyone holding the public API key calls it over /rest/v1/rpc, with its owner’s rights and no row-level security.',
  fix: 'Revoke execute from public and anon (grant it to authenticated if signed-in callers need it), or make the function security invoker.',
  async check({ db, schemas }) {
    const { rows } = await db.query<{ object: string }>(
      `select ${FUNCTION_OBJECT_SQL} as object
       from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
       join pg_catalog.pg_roles r on r.rolname = 'anon'
       where p.prosecdef and p.prokind = 'f' and n.nspname = any ($1::text[])
         and p.prorettype not in ('pg_catalog.trigger'::regtype, 'pg_catalog.event_trigger'::regtype)
         and pg_catalog.has_schema_privilege(r.oid, n.oid, 'USAGE')
         and pg_catalog.has_function_privilege(r.oid, p.oid, 'EXECUTE')
         and ${NOT_FROM_EXTENSION_SQL}
       order by 1`,
      [schemas],
    );
    return rows.map(({ object }) => ({
      id: this.id,
      level: this.level,
      object,
      detail: `${object} runs with its owner's rights and anyone with the public API key may call it (functions are executable by PUBLIC unless revoked).`,
      fix: `revoke execute on function ${object} from public, anon; (grant it to authenticated if signed-in callers need it)`,
    }));
  },
};
