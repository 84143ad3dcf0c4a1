// In charge of the shared pg connection pool and of turning connection failures into one
// recognisable error, so callers can answer 503 instead of crashing.
import pg from 'pg';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool itself or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, 'query'>;

export interface PoolOptions {
  max?: number;
  /** how long a request may wait for a connection before failing fast */
  connectionTimeoutMillis?: number;
}

export function createPool(connectionString: string, options: PoolOptions = {}): Pool {
  const pool = new pg.Pool({
    connectionString,
    max: options.max ?? 20,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 2000,
    idleTimeoutMillis: 30_000,
    application_name: 'tenantry',
  });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on('error', () => undefined);
  return pool;
}
