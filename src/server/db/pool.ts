// In charge of the shared pg connection pool: its size, the time limits every connection carries,
// and turning connection failures into one recognisable error, so callers can answer 503
// instead of crashing.
import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool itself or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

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
}

export const DEFAULT_STATEMENT_TIMEOUT_MS = 8000;
export const DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS = 30_000;

// The caller-facing statement timeout belongs to the pool it was configured with; withRls reads
// it from here so every caller-scoped transaction carries it without each call site passing it.
const statementTimeouts = new WeakMap<Pool, number>();

export function createPool(connectionString: string, options: PoolOptions = {}): Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 20,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 2000,
    idleTimeoutMillis: 30_000,
    application_name: 'tenantry',
    // Sent in the start-up message, so it costs no round trip: a transaction abandoned by a
    // crashed or stuck request cannot hold its locks and its connection for long.
    idle_in_transaction_session_timeout:
      options.idleInTransactionTimeoutMs ?? DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT_MS,
  });
  statementTimeouts.set(pool, options.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS);
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => undefined);
  return pool;
}

/** The statement timeout for caller-scoped work on this pool, in milliseconds. */
export function statementTimeoutOf(pool: Pool): number {
  return statementTimeouts.get(pool) ?? DEFAULT_STATEMENT_TIMEOUT_MS;
}

/** Pool options from the service's configuration. */
export function poolOptionsFrom(database: {
  poolMax: number;
  statementTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}): PoolOptions {
  return {
    max: database.poolMax,
    statementTimeoutMs: database.statementTimeoutMs,
    idleInTransactionTimeoutMs: database.idleInTransactionTimeoutMs,
  };
}
