// In charge of the two ways code touches data: withRls (as the caller, under row-level security,
// exactly as PostgREST does it) and withService (the narrow, RLS-bypassing path for trusted
// server work such as the identity service itself). Both run one transaction per call.
import type { Pool, PoolClient } from './pool.js';

/** The database roles a request can act as; anything else is refused before reaching SQL. */
export const REQUEST_ROLES = ['anon', 'authenticated', 'service_role'] as const;
export type RequestRole = (typeof REQUEST_ROLES)[number];

export interface Claims {
  role: RequestRole;
  sub?: string;
  [claim: string]: unknown;
}

export type Tx = PoolClient;

async function inTransaction<T>(
  pool: Pool,
  setup: (tx: Tx) => Promise<void>,
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  const tx = await pool.connect();
  let broken = false;
  try {
    await tx.query('begin');
    await setup(tx);
    const result = await fn(tx);
    await tx.query('commit');
    return result;
  } catch (error) {
    try {
      await tx.query('rollback');
    } catch {
      broken = true; // the connection itself failed; do not return it to the pool
    }
    throw error;
  } finally {
    tx.release(broken);
  }
}

/**
 * Runs fn in one transaction as the role named by the claims, with request.jwt.claims set so
 * auth.uid(), auth.role() and auth.jwt() answer for the caller. RLS policies then decide.
 */
export function withRls<T>(
  pool: Pool,
  claims: Claims,
  fn: (tx: Tx) => Promise<T>,
  options: { readOnly?: boolean } = {},
): Promise<T> {
  if (!REQUEST_ROLES.includes(claims.role)) {
    return Promise.reject(new Error(`Refusing to run as unknown role ${String(claims.role)}`));
  }
  return inTransaction(
    pool,
    async (tx) => {
      // set_config('role', …, true) is SET LOCAL ROLE with the role as a parameter; a read-only
      // transaction (reads over GET) refuses writes, as PostgREST's does.
      await tx.query(
        `select set_config('request.jwt.claims', $1, true), set_config('role', $2, true),
                set_config('transaction_read_only', $3, true)`,
        [JSON.stringify(claims), claims.role, options.readOnly ? 'on' : 'off'],
      );
    },
    fn,
  );
}

/**
 * Runs fn in one transaction with the pool's own privileges. Only for server-side modules that
 * own their tables (identity, billing webhook, digest, mail); never with request-supplied SQL.
 */
export function withService<T>(pool: Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
  return inTransaction(pool, async () => undefined, fn);
}
