// In charge of the shared pg connection pool: its size, the time limits every connection carries,
// whether its statements may be named (prepared) on the server, and turning connection failures
// into one recognisable error, so callers can answer 503 instead of crashing.
import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool itself or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

/** What stands between the pool and PostgreSQL (decision 0054). */
export type Pooler = 'none' | 'session' | 'transaction';

export interface PoolOptions {
  max?: number;
  /** how long a request may wait for a connection before failing fast */
  connectionTimeoutMillis?: number;
  /**
   * How long one statement run for a caller (withRls) may take before PostgreSQL cancels it.
   * Trusted server work (withService: migrations, digests) is not bounded by it.
   */
  statementTimeoutMs?: number;
  /** PostgreSQL closes a connection left idle inside a transaction for this long */
  idleInTransactionTimeoutMs?: number;
  /** a pooler in front of PostgreSQL; 'none' (the default) connects to PostgreSQL itself */
  pooler?: Pooler;
  /** statements may be prepared under a name and kept on their connection (default true) */
  preparedStatements?: boolean;
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 8000;
export const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;

interface Timeouts {
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
  /** the connections do not carry the idle-in-transaction limit: each transaction sets it */
  idleLimitPerTransaction: boolean;
}

// The time limits belong to the pool they were configured with; the transaction helpers read them
// from here so every transaction carries them without each call site passing them.
const timeouts = new WeakMap<Pool, Timeouts>();

/**
 * Drops the name of every named statement, so each runs as the unnamed statement of whatever
 * server connection it reaches. Behind a transaction-mode pooler consecutive transactions of one
 * client may run on different server connections, where a statement named on another does not
 * exist (26000). Every query of the pool goes through here, so no call site can forget.
 */
function unnamed(config: unknown): unknown {
  if (typeof config !== 'object' || config === null) return config;
  if (typeof (config as { submit?: unknown }).submit === 'function') return config; // a Submittable
  if (!('name' in config)) return config;
  const { name: _name, ...rest } = config as Record<string, unknown>;
  return rest;
}

/** A pg client whose statements are never named (see `unnamed`). */
class UnnamedStatementsClient extends pg.Client {}
const clientQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown;
(UnnamedStatementsClient.prototype as unknown as { query: (...args: unknown[]) => unknown }).query =
  function query(this: pg.Client, config: unknown, ...rest: unknown[]) {
    return clientQuery.call(this, unnamed(config), ...rest);
  };

/** False when the client's statements must not be named: the pipeline then sends them unnamed too. */
export function preparesStatements(client: object): boolean {
  return !(client instanceof UnnamedStatementsClient);
}

export function createPool(connectionString: string, options: PoolOptions = {}): Pool {
  const idleInTransactionTimeoutMs =
    options.idleInTransactionTimeoutMs ?? DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS;
  const direct = (options.pooler ?? 'none') === 'none';
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 20,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 2000,
    idleTimeoutMillis: 30_000,
    application_name: 'tenantry',
    ...(options.preparedStatements === false ? { Client: UnnamedStatementsClient } : {}),
    // Sent in the start-up message when the pool talks to PostgreSQL itself, where it costs no
    // round trip and covers every transaction. A pooler refuses start-up parameters it does not
    // know (PgBouncer: "unsupported startup parameter"), so behind one each transaction the
    // helpers open sets it for itself instead (transactions.ts, decision 0054).
    ...(direct ? { idle_in_transaction_session_timeout: idleInTransactionTimeoutMs } : {}),
  });
  timeouts.set(pool, {
    statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    idleInTransactionTimeoutMs,
    idleLimitPerTransaction: !direct,
  });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => undefined);
  return pool;
}

/** The statement timeout for caller-scoped work on this pool, in milliseconds. */
export function statementTimeoutOf(pool: Pool): number {
  return timeouts.get(pool)?.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
}

/**
 * The idle-in-transaction limit each transaction on this pool must set for itself, in
 * milliseconds, or null when its connections already carry it from their start-up.
 */
export function idleLimitPerTransactionOf(pool: Pool): number | null {
  const known = timeouts.get(pool);
  return known?.idleLimitPerTransaction ? known.idleInTransactionTimeoutMs : null;
}

/** Pool options from the service's configuration. */
export function poolOptionsFrom(database: {
  poolMax: number;
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
  pooler?: Pooler;
  preparedStatements?: boolean;
}): PoolOptions {
  return {
    max: database.poolMax,
    statementTimeoutMs: database.statementTimeoutMs,
    idleInTransactionTimeoutMs: database.idleInTransactionTimeoutMs,
    pooler: database.pooler ?? 'none',
    preparedStatements: database.preparedStatements ?? true,
  };
}
