// In charge of knowing what the data API may touch: the tables, columns, keys, relationships and
// functions of the exposed schemas (`public` unless DATA_API_SCHEMAS names others), read from
// pg_catalog. Reloaded when migrations announce a change (NOTIFY tenantry_schema), when the
// catalog changes (polled instead, behind a transaction-mode pooler that cannot hold a LISTEN), and
// on demand. Nothing outside the exposed schemas is ever listed.
import pg from 'pg';
import type { Pool } from '../db/pool.js';
import type { Logger } from '../logger.js';

export interface Column {
  name: string;
  /** format_type() output, e.g. `uuid`, `timestamp with time zone`, `public.workspace_role` */
  type: string;
  nullable: boolean;
  hasDefault: boolean;
  /** pg_get_expr() of the default, from the catalog */
  defaultExpression: string | null;
}

export interface Relationship {
  constraint: string;
  /** the table holding the foreign key */
  table: string;
  columns: string[];
  /** the referenced table */
  foreignTable: string;
  foreignColumns: string[];
}

export interface Table {
  /** the exposed schema the table lives in */
  schema: string;
  name: string;
  columns: Map<string, Column>;
  primaryKey: string[];
  uniqueKeys: string[][];
  insertable: boolean;
  /**
   * its rows may differ by reader: a table with row-level security enabled, or a view (which may
   * read such tables). Planner estimates over it would describe rows the reader cannot see.
   */
  rowSecurity: boolean;
  /** a view: its relationships come from the base tables its columns are read from */
  view?: boolean;
}

export interface FunctionArgument {
  name: string;
  type: string;
  hasDefault: boolean;
}

export interface DbFunction {
  /** the exposed schema the function lives in */
  schema: string;
  name: string;
  args: FunctionArgument[];
  returnType: string;
  returnsSet: boolean;
  /** columns (with their types) when the function returns rows of a table, composite type or TABLE(...) */
  returnColumns: { name: string; type: string }[] | null;
  returnsVoid: boolean;
  volatile: boolean;
  /** a single unnamed json/jsonb argument receives the whole body */
  singleJsonArgument: boolean;
  /** declared `ROWS 1`: a set-returning function that promises one row (a to-one embed) */
  returnsOneRow?: boolean;
}

export interface Schema {
  /** the PostgreSQL schema this view of the catalog describes */
  name: string;
  tables: Map<string, Table>;
  relationships: Relationship[];
  /** the foreign keys again, as seen through views whose columns are read from the keys' columns */
  viewRelationships?: Relationship[];
  functions: Map<string, DbFunction[]>;
}

/** Every exposed schema's catalog, by schema name. */
async function loadAll(pool: Pool, names: readonly string[]): Promise<Map<string, Schema>> {
  const all = new Map<string, Schema>();
  // One schema at a time keeps each query as simple as the single-schema one it grew from.
  for (const name of names) all.set(name, await load(pool, name));
  return all;
}

async function load(pool: Pool, nspname: string): Promise<Schema> {
  const tables = await pool.query<{ name: string; relkind: string; row_security: boolean }>(
    `select c.relname as name, c.relkind, c.relrowsecurity as row_security
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = $1 and c.relkind in ('r', 'p', 'v', 'm', 'f')`,
    [nspname],
  );
  const columns = await pool.query<{
    table: string;
    name: string;
    type: string;
    nullable: boolean;
    has_default: boolean;
    default_expression: string | null;
  }>(
    `select c.relname as table, a.attname as name, format_type(a.atttypid, a.atttypmod) as type,
            not a.attnotnull as nullable, a.atthasdef or a.attidentity <> '' or a.attgenerated <> '' as has_default,
            -- An identity column has no pg_attrdef row; its default is the next value of its
            -- sequence, spelled out so rows of one bulk insert can fall back to it.
            case when a.attidentity <> '' then
              format('nextval(%L::regclass)', pg_get_serial_sequence(format('%I.%I', n.nspname, c.relname), a.attname))
            else pg_get_expr(d.adbin, d.adrelid) end as default_expression
     from pg_attribute a
     join pg_class c on c.oid = a.attrelid
     join pg_namespace n on n.oid = c.relnamespace
     left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
     where n.nspname = $1 and c.relkind in ('r', 'p', 'v', 'm', 'f') and a.attnum > 0 and not a.attisdropped
     order by c.relname, a.attnum`,
    [nspname],
  );
  const constraints = await pool.query<{
    name: string;
    type: 'p' | 'u' | 'f';
    table: string;
    columns: string[];
    foreign_table: string | null;
    foreign_schema: string | null;
    foreign_columns: string[] | null;
  }>(
    `select con.conname as name, con.contype as type, c.relname as table,
            array(select a.attname::text from unnest(con.conkey) with ordinality k(n, i)
                  join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.n order by k.i) as columns,
            fc.relname as foreign_table, fn.nspname as foreign_schema,
            case when con.contype = 'f' then
              array(select a.attname::text from unnest(con.confkey) with ordinality k(n, i)
                    join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.n order by k.i)
            end as foreign_columns
     from pg_constraint con
     join pg_class c on c.oid = con.conrelid
     join pg_namespace n on n.oid = c.relnamespace
     left join pg_class fc on fc.oid = con.confrelid
     left join pg_namespace fn on fn.oid = fc.relnamespace
     where n.nspname = $1 and con.contype in ('p', 'u', 'f')
     -- A fixed order: without it the catalog's physical order decides, and a PGRST201 body
     -- lists its candidates differently after the catalog is rewritten (vacuum, other DDL).
     order by c.relname, con.conname`,
    [nspname],
  );
  const functions = await pool.query<{
    name: string;
    arg_names: string[] | null;
    arg_types: string[];
    arg_modes: string[] | null;
    default_count: number;
    return_type: string;
    returns_set: boolean;
    return_columns: string[] | null;
    return_column_types: string[] | null;
    volatility: string;
    estimated_rows: number;
  }>(
    `select p.proname as name, p.proargnames as arg_names,
            array(select format_type(t, null) from unnest(p.proargtypes) t) as arg_types,
            p.proargmodes::text[] as arg_modes, p.pronargdefaults::int as default_count,
            format_type(p.prorettype, null) as return_type, p.proretset as returns_set,
            case when rt.typrelid <> 0 then
              array(select a.attname::text from pg_attribute a where a.attrelid = rt.typrelid and a.attnum > 0
                    and not a.attisdropped order by a.attnum)
            when p.proargmodes is not null then
              array(select n from unnest(p.proargnames, p.proargmodes::text[]) u(n, m) where m in ('t', 'o'))
            end as return_columns,
            case when rt.typrelid <> 0 then
              array(select format_type(a.atttypid, a.atttypmod) from pg_attribute a
                    where a.attrelid = rt.typrelid and a.attnum > 0 and not a.attisdropped order by a.attnum)
            when p.proargmodes is not null then
              array(select format_type(t, null) from unnest(p.proallargtypes, p.proargmodes::text[]) u(t, m)
                    where m in ('t', 'o'))
            end as return_column_types,
            p.provolatile as volatility, p.prorows::float8 as estimated_rows
     from pg_proc p
     join pg_namespace n on n.oid = p.pronamespace
     join pg_type rt on rt.oid = p.prorettype
     where n.nspname = $1 and p.prokind = 'f'
       -- Trigger functions and functions over internal types cannot be called by a client.
       and p.prorettype not in ('trigger'::regtype, 'event_trigger'::regtype, 'internal'::regtype)
       and not ('internal'::regtype = any(p.proargtypes::oid[]))`,
    [nspname],
  );

  const viewColumns = await loadViewColumns(pool, nspname);

  const schema: Schema = { name: nspname, tables: new Map(), relationships: [], functions: new Map() };
  for (const t of tables.rows) {
    schema.tables.set(t.name, {
      schema: nspname,
      name: t.name,
      columns: new Map(),
      primaryKey: [],
      uniqueKeys: [],
      insertable: t.relkind === 'r' || t.relkind === 'p' || t.relkind === 'v' || t.relkind === 'f',
      rowSecurity: t.row_security || t.relkind === 'v',
      ...(t.relkind === 'v' ? { view: true } : {}),
    });
  }
  for (const c of columns.rows) {
    schema.tables.get(c.table)?.columns.set(c.name, {
      name: c.name,
      type: c.type,
      nullable: c.nullable,
      hasDefault: c.has_default,
      defaultExpression: c.default_expression,
    });
  }
  for (const con of constraints.rows) {
    const table = schema.tables.get(con.table);
    if (!table) continue;
    if (con.type === 'p') table.primaryKey = con.columns;
    else if (con.type === 'u') table.uniqueKeys.push(con.columns);
    else if (con.foreign_schema === nspname && con.foreign_table && con.foreign_columns) {
      schema.relationships.push({
        constraint: con.name,
        table: con.table,
        columns: con.columns,
        foreignTable: con.foreign_table,
        foreignColumns: con.foreign_columns,
      });
    }
  }
  schema.viewRelationships = relationshipsThroughViews(schema.relationships, viewColumns);
  for (const f of functions.rows) {
    const modes = f.arg_modes ?? f.arg_types.map(() => 'i');
    const names = f.arg_names ?? [];
    // Input arguments are the i/b/v modes; proargtypes lists exactly those, in order.
    const inputNames =
      names.length > 0 ? names.filter((_, i) => ['i', 'b', 'v'].includes(modes[i] ?? 'i')) : [];
    const args = f.arg_types.map((type, i) => ({
      name: inputNames[i] ?? '',
      type,
      hasDefault: i >= f.arg_types.length - f.default_count,
    }));
    const fn: DbFunction = {
      schema: nspname,
      name: f.name,
      args,
      returnType: f.return_type,
      returnsSet: f.returns_set,
      returnColumns:
        f.return_columns?.map((name, i) => ({ name, type: f.return_column_types?.[i] ?? 'text' })) ?? null,
      returnsVoid: f.return_type === 'void',
      volatile: f.volatility === 'v',
      singleJsonArgument:
        args.length === 1 && args[0]!.name === '' && ['json', 'jsonb'].includes(args[0]!.type),
      ...(f.returns_set && Number(f.estimated_rows) === 1 ? { returnsOneRow: true } : {}),
    };
    const list = schema.functions.get(f.name) ?? [];
    list.push(fn);
    schema.functions.set(f.name, list);
  }
  return schema;
}

/** view -> view column -> the table and column it is read from (possibly another view's) */
type ViewColumns = Map<string, Map<string, { table: string; column: string }>>;

/**
 * Where each view column comes from, as PostgreSQL recorded it in the view's rewrite rule: every
 * target entry carries the table and column it was read from (resorigtbl/resorigcol). Entries of
 * subqueries come first in the rule's text, so the last entry for a column is the view's own.
 */
async function loadViewColumns(pool: Pool, nspname: string): Promise<ViewColumns> {
  const rows = await pool.query<{ view: string; column: string; base: string; base_column: string }>(
    `select v.relname as view, va.attname as column, bt.relname as base, ba.attname as base_column
     from pg_rewrite r
     join pg_class v on v.oid = r.ev_class
     join pg_namespace n on n.oid = v.relnamespace
     cross join lateral regexp_matches(r.ev_action::text,
       ':resno (\\d+) :resname (\\S+) :ressortgroupref \\d+ :resorigtbl (\\d+) :resorigcol (\\d+) :resjunk false',
       'g') with ordinality as m(parts, i)
     join pg_attribute va on va.attrelid = v.oid and va.attnum = m.parts[1]::int and va.attname = m.parts[2]
     join pg_class bt on bt.oid = m.parts[3]::oid
     join pg_namespace bn on bn.oid = bt.relnamespace and bn.nspname = $1
     join pg_attribute ba on ba.attrelid = bt.oid and ba.attnum = m.parts[4]::int
     where n.nspname = $1 and v.relkind = 'v' and r.rulename = '_RETURN'
     order by v.relname, va.attnum, m.i`,
    [nspname],
  );
  const views: ViewColumns = new Map();
  for (const row of rows.rows) {
    const columns = views.get(row.view) ?? new Map<string, { table: string; column: string }>();
    columns.set(row.column, { table: row.base, column: row.base_column });
    views.set(row.view, columns);
  }
  return views;
}

/**
 * Each foreign key once more for every view exposing all its columns (on either end, or both),
 * so embeds work through views as they do in PostgREST.
 */
function relationshipsThroughViews(keys: Relationship[], views: ViewColumns): Relationship[] {
  // Follow views of views down to the table (bounded, in case of a cycle in odd catalogs).
  const base = (view: string, column: string) => {
    let at = views.get(view)?.get(column);
    for (let i = 0; at && views.has(at.table) && i < 16; i++) at = views.get(at.table)?.get(at.column);
    return at;
  };
  /** views over `table` exposing every one of `columns`, with the view's names for them */
  const over = (table: string, columns: string[]) => {
    const found: { view: string; columns: string[] }[] = [];
    for (const [view, mapping] of views) {
      const names = columns.map((c) =>
        [...mapping.keys()].find((v) => {
          const origin = base(view, v);
          return origin?.table === table && origin.column === c;
        }),
      );
      if (names.every((n) => n !== undefined)) found.push({ view, columns: names as string[] });
    }
    return found;
  };
  const out: Relationship[] = [];
  for (const key of keys) {
    const from = [{ view: key.table, columns: key.columns }, ...over(key.table, key.columns)];
    const to = [
      { view: key.foreignTable, columns: key.foreignColumns },
      ...over(key.foreignTable, key.foreignColumns),
    ];
    for (const a of from) {
      for (const b of to) {
        if (a.view === key.table && b.view === key.foreignTable) continue; // the key itself
        out.push({
          ...key,
          table: a.view,
          columns: a.columns,
          foreignTable: b.view,
          foreignColumns: b.columns,
        });
      }
    }
  }
  return out;
}

/**
 * How the cache hears of changes made elsewhere: LISTEN on a connection of its own (to the pool's
 * database, or to `url`: a direct address past a transaction-mode pooler, where a LISTEN would
 * hold nothing), or polling the catalog every `intervalMs` (decision 0054).
 */
export type SchemaWatch = { kind: 'listen'; url?: string } | { kind: 'poll'; intervalMs: number };

/** The watch the database settings call for: a listen URL wins; a transaction-mode pooler polls. */
export function schemaWatchFor(database: {
  pooler: 'none' | 'session' | 'transaction';
  listenUrl: string | undefined;
  schemaPollIntervalMs: number;
}): SchemaWatch {
  if (database.listenUrl) return { kind: 'listen', url: database.listenUrl };
  if (database.pooler === 'transaction') return { kind: 'poll', intervalMs: database.schemaPollIntervalMs };
  return { kind: 'listen' };
}

/** `count:sum of xmin` of a catalog's rows that concern the exposed schemas. */
const catalogPart = (from: string, where: string) =>
  `(select count(*) || ':' || coalesce(sum(x.xmin::text::bigint), 0) from ${from} x where ${where})`;

/**
 * A value that changes whenever anything the cache reads changes. Every DDL statement writes a
 * new version of the catalog rows it touches (new rows, new xmin), committed or not at all; the
 * in-place updates VACUUM and ANALYZE make keep xmin, so statistics do not count as changes.
 */
const CATALOG_VERSION = `
  with ns as (select oid from pg_namespace where nspname = any($1::text[])),
       rel as (select oid from pg_class where relnamespace in (select oid from ns))
  select concat_ws(' ',
    ${catalogPart('pg_namespace', 'x.oid in (select oid from ns)')},
    ${catalogPart('pg_class', 'x.oid in (select oid from rel)')},
    ${catalogPart('pg_attribute', 'x.attrelid in (select oid from rel)')},
    ${catalogPart('pg_attrdef', 'x.adrelid in (select oid from rel)')},
    ${catalogPart('pg_constraint', 'x.conrelid in (select oid from rel) or x.connamespace in (select oid from ns)')},
    ${catalogPart('pg_rewrite', 'x.ev_class in (select oid from rel)')},
    ${catalogPart('pg_proc', 'x.pronamespace in (select oid from ns)')},
    ${catalogPart('pg_type', 'x.typnamespace in (select oid from ns)')}
  ) as version`;

const CHANNEL = 'tenantry_schema';
/** A miss (unknown table, function…) reloads at most this often, so probing names stays cheap. */
const MISS_RELOAD_INTERVAL_MS = 1000;
const LISTEN_RETRY_MS = 2000;

/**
 * Holds the current schema; a reload swaps it atomically. The first use starts watching for
 * changes (see SchemaWatch): a LISTEN on a dedicated connection (a pool client held forever would
 * keep pool.end() from finishing), or a poll of the catalog; either stops when the pool ends.
 */
export class SchemaCache {
  private current: Promise<Map<string, Schema>> | undefined;
  private loadedAt = 0;
  private inFlight: Promise<Map<string, Schema>> | undefined;
  private reloadAgain = false;
  private listener: pg.Client | undefined;
  private listening = false;
  private closed = false;
  private watchdog: NodeJS.Timeout | undefined;
  private poller: NodeJS.Timeout | undefined;
  private polling = false;
  /** the catalog's version read just before the schema in use was (polling only) */
  private version: string | undefined;

  constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
    /** the exposed schemas, the default one (used without a profile header) first */
    readonly schemas: readonly string[] = ['public'],
    private readonly watch: SchemaWatch = { kind: 'listen' },
  ) {}

  /** One exposed schema (the default one unless named); the request has already checked the name. */
  private pick(all: Map<string, Schema>, profile?: string): Schema {
    return all.get(profile ?? this.schemas[0]!) ?? all.get(this.schemas[0]!)!;
  }

  get(profile?: string): Promise<Schema> {
    if (!this.listening) this.listen();
    this.current ??= this.load().catch((error: unknown) => {
      this.current = undefined; // try again on the next request
      throw error;
    });
    return this.current.then((all) => this.pick(all, profile));
  }

  /** Reads the catalog again; concurrent calls share one load, and a call during a load queues one more. */
  reload(profile?: string): Promise<Schema> {
    return this.reloadAll().then((all) => this.pick(all, profile));
  }

  private reloadAll(): Promise<Map<string, Schema>> {
    if (this.inFlight) {
      this.reloadAgain = true;
      return this.inFlight;
    }
    const next = this.load();
    this.inFlight = next;
    next.then(
      (schema) => {
        this.current = Promise.resolve(schema);
      },
      (error: unknown) => this.logger.error({ err: error }, 'schema cache reload failed'),
    );
    void next
      .finally(() => {
        this.inFlight = undefined;
        if (this.reloadAgain) {
          this.reloadAgain = false;
          void this.reloadAll().catch(() => undefined);
        }
      })
      .catch(() => undefined);
    return next;
  }

  /**
   * A request named something the cache does not know: maybe a migration ran and its notice has
   * not arrived yet. Returns a fresh schema to retry with, or null when the cache is fresh enough
   * that a reload could not help.
   */
  async refreshAfterMiss(profile?: string): Promise<Schema | null> {
    if (this.inFlight) return this.pick(await this.inFlight, profile);
    if (Date.now() - this.loadedAt < MISS_RELOAD_INTERVAL_MS) return null;
    return this.reload(profile);
  }

  private async load(): Promise<Map<string, Schema>> {
    const started = Date.now();
    // Read first: a change made while the catalog is read then shows as a new version next time.
    if (this.watch.kind === 'poll') this.version = await this.catalogVersion();
    const schema = await loadAll(this.pool, this.schemas);
    this.loadedAt = started;
    return schema;
  }

  private async catalogVersion(): Promise<string> {
    const result = await this.pool.query<{ version: string }>(CATALOG_VERSION, [this.schemas]);
    return result.rows[0]!.version;
  }

  /** Reloads when the catalog's version differs from the one the schema in use was read at. */
  private async poll(): Promise<void> {
    if (this.polling || this.closed || this.pool.ending || this.version === undefined) return;
    this.polling = true;
    try {
      if ((await this.catalogVersion()) !== this.version) await this.reloadAll();
    } catch (error) {
      this.logger.warn({ err: error }, 'schema cache could not check the catalog; trying again');
    } finally {
      this.polling = false;
    }
  }

  /**
   * Starts watching for schema changes: subscribes to NOTIFY tenantry_schema (so migrations
   * applied by any instance reach this one) or polls the catalog, as the watch says.
   */
  listen(): void {
    if (this.listening || this.closed) return;
    this.listening = true;
    if (this.watch.kind === 'poll') {
      this.poller = setInterval(() => void this.poll(), this.watch.intervalMs);
      this.poller.unref();
    } else {
      void this.connectListener(false);
    }
    // The pool has no "ended" event; this check lets the listener go when the pool is shut down.
    this.watchdog = setInterval(() => {
      if (this.pool.ending) this.close();
    }, 500);
    this.watchdog.unref();
  }

  private async connectListener(reconnecting: boolean): Promise<void> {
    if (this.closed || this.pool.ending) return;
    const client = new pg.Client({
      ...this.pool.options,
      ...(this.watch.kind === 'listen' && this.watch.url ? { connectionString: this.watch.url } : {}),
      application_name: 'tenantry schema listener',
    });
    let failed = false;
    const retry = () => {
      if (failed) return;
      failed = true;
      if (this.listener === client) this.listener = undefined;
      client.end().catch(() => undefined);
      if (this.closed || this.pool.ending) return;
      setTimeout(() => void this.connectListener(true), LISTEN_RETRY_MS).unref();
    };
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', (message) => {
      if (message.channel === CHANNEL) void this.reload().catch(() => undefined);
    });
    try {
      await client.connect();
      await client.query(`listen ${CHANNEL}`);
      if (this.closed) {
        failed = true;
        await client.end();
        return;
      }
      this.listener = client;
      // Notices sent while we were disconnected are lost; reading the catalog again covers them.
      if (reconnecting) void this.reload().catch(() => undefined);
    } catch (error) {
      this.logger.warn({ err: error }, 'schema cache listener could not connect; retrying');
      retry();
    }
  }

  close(): void {
    this.closed = true;
    if (this.watchdog) clearInterval(this.watchdog);
    if (this.poller) clearInterval(this.poller);
    const client = this.listener;
    this.listener = undefined;
    if (client) {
      client.removeAllListeners('end');
      client.removeAllListeners('error');
      client.on('error', () => undefined);
      void client.end().catch(() => undefined);
    }
  }
}
