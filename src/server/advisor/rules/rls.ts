// In charge of the row-level security of exposed tables: a table the request roles can reach in a
// schema the data API serves must have RLS enabled (else grants alone decide, for every tenant's
// rows) and forced (else its owner, the role the service connects as, skips the policies, and so
// does every view and security definer function that owner holds).
import type { Queryable } from '../../db/pool.js';
import { NOT_FROM_EXTENSION_SQL, REACHABLE_SQL, type Rule } from '../finding.js';

interface ExposedTable {
  object: string;
  enabled: boolean;
  forced: boolean;
}

async function exposedTables(db: Queryable, schemas: string[]) {
  const { rows } = await db.query<ExposedTable>(
    `select format('%I.%I', n.nspname, c.relname) as object,
            c.relrowsecurity as enabled, c.relforcerowsecurity as forced
     from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
     where c.relkind in ('r', 'p') and n.nspname = any ($1::text[])
       and ${NOT_FROM_EXTENSION_SQL} and ${REACHABLE_SQL}
     order by 1`,
    [schemas],
  );
  return rows;
}

export const rlsDisabled: Rule = {
  id: 'rls_disabled_in_exposed_schema',
  level: 'ERROR',
  what: 'A table in an exposed schema that anon or authenticated holds a privilege on has row-level security off: grants alone decide, over every tenant’s rows.',
  fix: 'Enable and force row-level security on the table and write its policies, or revoke the request roles’ privileges.',
  async check({ db, schemas }) {
    return (await exposedTables(db, schemas))
      .filter((table) => !table.enabled)
      .map((table) => ({
        id: this.id,
        level: this.level,
        object: table.object,
        detail: `${table.object} is reachable over the data API with row-level security off, so every row is open to whatever the grants allow.`,
        fix: `alter table ${table.object} enable row level security, force row level security; then write its policies (or revoke anon's and authenticated's privileges).`,
      }));
  },
};

export const rlsNotForced: Rule = {
  id: 'rls_not_forced',
  level: 'WARN',
  what: 'A table in an exposed schema that the request roles can reach has row-level security enabled but not forced: its owner, and every view or security definer function the owner holds, skips the policies.',
  fix: 'Force row-level security on the table.',
  async check({ db, schemas }) {
    return (await exposedTables(db, schemas))
      .filter((table) => table.enabled && !table.forced)
      .map((table) => ({
        id: this.id,
        level: this.level,
        object: table.object,
        detail: `${table.object} has row-level security enabled but not forced, so its owner's views and security definer functions read every row.`,
        fix: `alter table ${table.object} force row level security;`,
      }));
  },
};
