// In charge of reading row-level security policies from the catalog for the rules that judge them:
// each policy's table, command, whether it applies to signed-in callers, and its expressions as
// PostgreSQL prints them (names schema-qualified, the context's search_path being empty).
import { NOT_FROM_EXTENSION_SQL, SYSTEM_SCHEMAS_SQL, type AdvisorContext } from './finding.js';

export type Command = 'SELECT' | 'INSERT' | 'UPDATE' | 'DELETE' | 'ALL';

export interface Policy {
  schema: string;
  /** the table's name as PostgreSQL qualifies the policy's row inside a sub-select */
  table: string;
  /** schema.table, quoted where needed */
  qualifiedTable: string;
  name: string;
  permissive: boolean;
  command: Command;
  /** the policy applies to the authenticated role (named, through a role it belongs to, or PUBLIC) */
  forAuthenticated: boolean;
  using: string | null;
  withCheck: string | null;
  /** the table has row-level security enabled, so its policies run */
  rlsEnabled: boolean;
}

export async function readPolicies(context: AdvisorContext): Promise<Policy[]> {
  const { rows } = await context.db.query<Policy>(
    `select n.nspname as schema, c.relname as "table", format('%I.%I', n.nspname, c.relname) as "qualifiedTable",
            p.polname as name, p.polpermissive as permissive,
            case p.polcmd when 'r' then 'SELECT' when 'a' then 'INSERT' when 'w' then 'UPDATE'
                          when 'd' then 'DELETE' else 'ALL' end as command,
            (0 = any (p.polroles) or exists (
               select 1 from pg_catalog.pg_roles r
               where r.rolname = 'authenticated'
                 and exists (select 1 from unnest(p.polroles) g
                             where g <> 0 and pg_catalog.pg_has_role(r.oid, g, 'MEMBER'))
             )) as "forAuthenticated",
            pg_catalog.pg_get_expr(p.polqual, p.polrelid) as using,
            pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid) as "withCheck",
            c.relrowsecurity as "rlsEnabled"
     from pg_catalog.pg_policy p
     join pg_catalog.pg_class c on c.oid = p.polrelid
     join pg_catalog.pg_namespace n on n.oid = c.relnamespace
     where ${SYSTEM_SCHEMAS_SQL} and ${NOT_FROM_EXTENSION_SQL}
     order by 1, 2, 4`,
  );
  return rows;
}

/** How findings name a policy: `public.notes policy notes_read`. */
export function policyObject(policy: Policy): string {
  return `${policy.qualifiedTable} policy ${policy.name}`;
}

/** The policy's expressions that are present, with the clause each came from. */
export function expressionsOf(policy: Policy): Array<{ clause: 'using' | 'with check'; text: string }> {
  const found: Array<{ clause: 'using' | 'with check'; text: string }> = [];
  if (policy.using !== null) found.push({ clause: 'using', text: policy.using });
  if (policy.withCheck !== null) found.push({ clause: 'with check', text: policy.withCheck });
  return found;
}
