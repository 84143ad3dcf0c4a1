// In charge of views the request roles can read in an exposed schema. A view runs with its owner's
// rights unless it is security_invoker (PostgreSQL 15+), so it shows rows the caller's policies
// would hide; a materialized view has no policies at all.
import type { Queryable } from '../../db/pool.js';
import { NOT_FROM_EXTENSION_SQL, READABLE_SQL, type Rule } from '../finding.js';

interface ExposedView {
  object: string;
  kind: 'v' | 'm';
  invoker: boolean;
}

async function exposedViews(db: Queryable, schemas: string[]) {
  const { rows } = await db.query<ExposedView>(
    `select format('%I.%I', n.nspname, c.relname) as object, c.relkind as kind,
            exists (select 1 from unnest(coalesce(c.reloptions, '{}')) o
                    where lower(o) in ('security_invoker=true', 'security_invoker=on',
                                       'security_invoker=1', 'security_invoker=yes')) as invoker
     from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
     where c.relkind in ('v', 'm') and n.nspname = any ($1::text[])
       and ${NOT_FROM_EXTENSION_SQL} and ${READABLE_SQL}
     order by 1`,
    [schemas],
  );
  return rows;
}

export const securityDefinerView: Rule = {
  id: 'security_definer_view',
  level: 'ERROR',
  what: 'A view in an exposed schema that anon or authenticated can read runs as its owner (security_invoker off), so it bypasses the row-level security of the tables it reads.',
  fix: 'Make the view security_invoker, or revoke the request roles’ select on it.',
  async check({ db, schemas }) {
    return (await exposedViews(db, schemas))
      .filter((view) => view.kind === 'v' && !view.invoker)
      .map((view) => ({
        id: this.id,
        level: this.level,
        object: view.object,
        detail: `${view.object} reads its tables with its owner's rights, so callers see rows their policies hide.`,
        fix: `alter view ${view.object} set (security_invoker = on); (or revoke select from anon, authenticated)`,
      }));
  },
};

export const materializedViewInApi: Rule = {
  id: 'materialized_view_in_api',
  level: 'WARN',
  what: 'A materialized view in an exposed schema that anon or authenticated can read: it has no row-level security, so every caller sees every row it holds.',
  fix: 'Revoke the request roles’ select on it, or move it to a schema the data API does not expose.',
  async check({ db, schemas }) {
    return (await exposedViews(db, schemas))
      .filter((view) => view.kind === 'm')
      .map((view) => ({
        id: this.id,
        level: this.level,
        object: view.object,
        detail: `${view.object} is a materialized view readable over the data API, and materialized views have no row-level security.`,
        fix: `revoke select on ${view.object} from anon, authenticated; (or move it out of the exposed schemas)`,
      }));
  },
};
