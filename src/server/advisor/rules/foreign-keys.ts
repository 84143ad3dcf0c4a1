// In charge of foreign keys without an index on the referencing columns. Deleting or re-keying a
// referenced row makes PostgreSQL find the rows that point at it (to cascade, null or refuse): with
// no index whose leading columns are the key's, that is a scan of the whole referencing table per
// row changed, and joins along the key cannot use an index either.
import { NOT_FROM_EXTENSION_SQL, SYSTEM_SCHEMAS_SQL, type Rule } from '../finding.js';

interface UnindexedKey {
  table: string;
  name: string;
  columns: string;
  referenced: string;
}

export const unindexedForeignKey: Rule = {
  id: 'unindexed_foreign_key',
  level: 'INFO',
  what: 'A foreign key whose columns lead no index of the referencing table: every delete or key change in the referenced table scans the referencing table.',
  fix: 'Create an index on the foreign key’s columns.',
  async check({ db }) {
    // An index covers the key when its first key columns are the key's columns, in any order (a
    // btree or hash index serves equality on them), it is valid, and it is not partial (a partial
    // index does not hold every row the key's lookups must find), unless its only condition is
    // that a one-column key is not null: the lookup's `= $1` implies it, and null keys refer to
    // nothing.
    const { rows } = await db.query<UnindexedKey>(
      `select format('%I.%I', n.nspname, c.relname) as "table", con.conname as name,
              (select string_agg(quote_ident(a.attname), ', ' order by k.ord)
               from unnest(con.conkey) with ordinality k(attnum, ord)
               join pg_catalog.pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.attnum) as columns,
              format('%I.%I', fn.nspname, fc.relname) as referenced
       from pg_catalog.pg_constraint con
       join pg_catalog.pg_class c on c.oid = con.conrelid
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       join pg_catalog.pg_class fc on fc.oid = con.confrelid
       join pg_catalog.pg_namespace fn on fn.oid = fc.relnamespace
       where con.contype = 'f' and con.conparentid = 0 and ${SYSTEM_SCHEMAS_SQL} and ${NOT_FROM_EXTENSION_SQL}
         and not exists (
           select 1 from pg_catalog.pg_index i
           join pg_catalog.pg_class ic on ic.oid = i.indexrelid
           join pg_catalog.pg_am am on am.oid = ic.relam
           where i.indrelid = con.conrelid and i.indisvalid
             and (i.indpred is null
                  or (cardinality(con.conkey) = 1
                      and pg_catalog.pg_get_expr(i.indpred, i.indrelid) = format('(%s IS NOT NULL)',
                        (select quote_ident(a.attname) from pg_catalog.pg_attribute a
                         where a.attrelid = con.conrelid and a.attnum = con.conkey[1]))))
             and am.amname in ('btree', 'hash')
             and i.indnkeyatts >= cardinality(con.conkey)
             and (select array_agg(x order by x) from unnest((i.indkey::int2[])[0:cardinality(con.conkey) - 1]) x)
               = (select array_agg(x order by x) from unnest(con.conkey) x))
       order by 1, 2`,
    );
    return rows.map((key) => ({
      id: this.id,
      level: this.level,
      object: `${key.table} foreign key ${key.name}`,
      detail: `${key.table} (${key.columns}) refers to ${key.referenced} without an index: each delete or key change there scans ${key.table}.`,
      fix: `create index on ${key.table} (${key.columns});`,
    }));
  },
};
