// In charge of what realtime knows of the watched tables: every table of publication
// `supabase_realtime` in the exposed schemas, with its columns (pg type names, and which of them
// each request role may select), primary key, replica identity, whether row-level security is on,
// which operations the publication publishes, and the column that scopes its rows to a workspace. It also keeps the capture trigger on exactly
// those tables (realtime.sync_changes), at start and at each refresh.
import type { Pool } from '../db/pool.js';

export type RequestRole = 'anon' | 'authenticated' | 'service_role';

export interface TableColumn {
  name: string;
  type: string;
  /** selectable by each request role (column privileges) */
  selectable: Record<RequestRole, boolean>;
}

export interface WatchedTable {
  relid: number;
  schema: string;
  table: string;
  columns: TableColumn[];
  /** name -> pg type name */
  types: Map<string, string>;
  /** primary key columns in key order; empty when the table has none */
  primaryKey: string[];
  /** the columns an UPDATE's or DELETE's old_record holds (REPLICA IDENTITY) */
  identity: string[];
  rls: boolean;
  publishes: { I: boolean; U: boolean; D: boolean };
  /** the column naming the row's workspace, when only its members may read the row (0082) */
  scope: string | null;
}

interface Row {
  relid: number;
  schema: string;
  table: string;
  rls: boolean;
  replident: string;
  ins: boolean;
  upd: boolean;
  del: boolean;
  scope: string | null;
  columns: {
    name: string;
    type: string;
    pk: number | null;
    ri: boolean;
    anon: boolean;
    authenticated: boolean;
    service_role: boolean;
  }[];
}

const LOAD = `
  select c.oid::int8::float8 as relid, n.nspname as schema, c.relname as "table",
         c.relrowsecurity as rls, c.relreplident as replident,
         bool_or(pub.pubinsert) as ins, bool_or(pub.pubupdate) as upd, bool_or(pub.pubdelete) as del,
         (select s.scope_column from realtime.change_scopes s where s.relid = c.oid) as scope,
         (select json_agg(json_build_object(
                   'name', a.attname, 'type', t.typname,
                   'pk', array_position(pk.indkey::int2[], a.attnum),
                   'ri', coalesce(a.attnum = any (ri.indkey::int2[]), false),
                   'anon', has_column_privilege('anon', c.oid, a.attnum, 'SELECT'),
                   'authenticated', has_column_privilege('authenticated', c.oid, a.attnum, 'SELECT'),
                   'service_role', has_column_privilege('service_role', c.oid, a.attnum, 'SELECT'))
                 order by a.attnum)
            from pg_attribute a
            join pg_type t on t.oid = a.atttypid
            left join pg_index pk on pk.indrelid = c.oid and pk.indisprimary
            left join pg_index ri on ri.indrelid = c.oid and ri.indisreplident
           where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped) as columns
    from pg_publication pub
    join pg_publication_tables p on p.pubname = pub.pubname
    join pg_namespace n on n.nspname = p.schemaname
    join pg_class c on c.relnamespace = n.oid and c.relname = p.tablename
   where pub.pubname = 'supabase_realtime' and p.schemaname = any ($1::text[])
   group by c.oid, n.nspname, c.relname, c.relrowsecurity, c.relreplident`;

function tableOf(row: Row): WatchedTable {
  const columns = (row.columns ?? []).map((c) => ({
    name: c.name,
    type: c.type,
    selectable: { anon: c.anon, authenticated: c.authenticated, service_role: c.service_role },
  }));
  const primaryKey = (row.columns ?? [])
    .filter((c) => c.pk !== null)
    .sort((a, b) => a.pk! - b.pk!)
    .map((c) => c.name);
  const identity =
    row.replident === 'f'
      ? columns.map((c) => c.name)
      : row.replident === 'i'
        ? (row.columns ?? []).filter((c) => c.ri).map((c) => c.name)
        : row.replident === 'n'
          ? []
          : primaryKey;
  return {
    relid: row.relid,
    schema: row.schema,
    table: row.table,
    columns,
    types: new Map(columns.map((c) => [c.name, c.type])),
    primaryKey,
    identity,
    rls: row.rls,
    publishes: { I: row.ins, U: row.upd, D: row.del },
    scope: row.scope,
  };
}

export class Catalog {
  private byRelid = new Map<number, WatchedTable>();
  private byName = new Map<string, WatchedTable>();
  private lastMiss = 0;
  private reading: Promise<void> | null = null;

  constructor(
    private readonly pool: Pool,
    readonly schemas: readonly string[],
  ) {}

  /** Puts the capture trigger where the publication says, then reads the tables again. */
  async refresh(sync = true): Promise<void> {
    if (sync) await this.pool.query('select realtime.sync_changes($1::text[])', [this.schemas]);
    const { rows } = await this.pool.query<Row>(LOAD, [this.schemas]);
    const tables = rows.map(tableOf);
    this.byRelid = new Map(tables.map((t) => [t.relid, t]));
    this.byName = new Map(tables.map((t) => [`${t.schema}.${t.table}`, t]));
  }

  byId(relid: number): WatchedTable | undefined {
    return this.byRelid.get(relid);
  }

  named(schema: string, table: string): WatchedTable | undefined {
    return this.byName.get(`${schema}.${table}`);
  }

  all(): IterableIterator<WatchedTable> {
    return this.byRelid.values();
  }

  /** A table by name, reading the catalog again (at most once a second) when it is not known yet. */
  async lookup(schema: string, table: string): Promise<WatchedTable | undefined> {
    const known = this.named(schema, table);
    if (known) return known;
    // Joins that arrive together wait for the one reading rather than being refused.
    if (!this.reading && Date.now() - this.lastMiss >= 1000) {
      this.lastMiss = Date.now();
      this.reading = this.refresh()
        .catch(() => this.refresh(false))
        .finally(() => {
          this.reading = null;
        });
    }
    if (this.reading) await this.reading.catch(() => undefined);
    return this.named(schema, table);
  }

  /** A change of a table not known yet (just added): reads the catalog again, at most once a second. */
  async missed(relid: number): Promise<WatchedTable | undefined> {
    if (Date.now() - this.lastMiss < 1000) return undefined;
    this.lastMiss = Date.now();
    await this.refresh(false);
    return this.byRelid.get(relid);
  }
}
