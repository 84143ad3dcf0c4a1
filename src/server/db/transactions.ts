// In charge of the two ways code touches data: withRls (as the caller, under row-level security,
// exactly as PostgREST does it) and withService (the narrow, RLS-bypassing path for trusted
// server work such as the identity service itself). Both run one transaction per call.
import type { QueryConfig } from 'pg';
import { cancelBackend } from './cancel.js';
import { runPipeline } from './pipeline.js';
import { idleLimitPerTransactionOf, statementTimeoutOf, type Pool, type PoolClient } from './pool.js';

/** The database roles a request can act as; anything else is refused before reaching SQL. */
export const REQUEST_ROLES = ['anon', 'authenticated', 'service_role'] as const;
export type RequestRole = (typeof REQUEST_ROLES)[number];

export interface Claims {
  role: RequestRole;
  sub?: string;
  [claim: string]: unknown;
}

export type Tx = PoolClient;

/**
 * How long a rollback may take before the connection is judged broken. A healthy connection
 * rolls back in a millisecond; one whose protocol state a driver failure left undefined (a result
 * it could not read, a query abandoned by its read timeout) never answers, and must be destroyed
 * rather than returned to the pool or waited on.
 */
const ROLLBACK_TIMEOUT_MS = 1000;

/**
 * A query the driver gives up on after `ms` without an answer (pg's query_timeout, which its
 * QueryConfig type does not list). The caller must then treat the connection as broken.
 */
export function withReadTimeout(text: string, ms: number, values?: unknown[]): QueryConfig {
  const config: QueryConfig & { query_timeout: number } = { text, values, query_timeout: ms };
  return config;
}

/** pg's message when a query's read timeout (query_timeout) ends the wait for its answer. */
const READ_TIMEOUT_MESSAGE = 'Query read timeout';

/**
 * A statement the driver stopped waiting for, which was then cancelled in the database. It reads
 * as PostgreSQL's own cancellation (SQLSTATE 57014), which is what it is.
 */
export class StatementAbandoned extends Error {
  override name = 'StatementAbandoned';
  readonly code = '57014';
  readonly severity = 'ERROR';
  constructor() {
    super('canceling statement: no answer within the read timeout');
  }
}

/**
 * Checks out a connection for one transaction that `run` opens and ends, and owns what can go
 * wrong around it: a failure rolls back (a connection that cannot even do that is destroyed), and
 * the connection is always given back. A statement the driver gave up waiting for is cancelled
 * in the database and its connection destroyed: a rollback would only queue behind it.
 */
async function onConnection<T>(pool: Pool, run: (tx: Tx) => Promise<T>): Promise<T> {
  const tx = await pool.connect();
  let broken = false;
  // The server may end a connection while it is checked out (idle-in-transaction timeout, an
  // administrator, a restart); pg reports that as an 'error' event, which must not crash the process.
  const onError = () => {
    broken = true;
  };
  tx.on('error', onError);
  try {
    return await run(tx);
  } catch (error) {
    if (error instanceof Error && error.message === READ_TIMEOUT_MESSAGE) {
      broken = true;
      await cancelBackend(tx);
      throw new StatementAbandoned();
    }
    try {
      await tx.query(withReadTimeout('rollback', ROLLBACK_TIMEOUT_MS));
    } catch {
      broken = true; // the connection itself failed; destroy it instead of returning it to the pool
    }
    throw error;
  } finally {
    tx.off('error', onError);
    tx.release(broken);
  }
}

const IDLE_LIMIT_TEXT = `select set_config('idle_in_transaction_session_timeout', $1, true)`;

/**
 * `begin`, with the transaction's own idle-in-transaction limit in the same round trip when the
 * pool's connections do not carry it: a pooler refuses it as a start-up parameter, and a
 * transaction-mode pooler gives each transaction whichever server connection is free, so only a
 * setting made inside the transaction is sure to be where the transaction runs (decision 0054).
 */
function opening(pool: Pool): Statement[] {
  const begin: Statement = { text: 'begin', values: [] };
  const limit = idleLimitPerTransactionOf(pool);
  if (limit === null) return [begin];
  return [begin, { text: IDLE_LIMIT_TEXT, values: [String(limit)] }];
}

function inTransaction<T>(
  pool: Pool,
  setup: (tx: Tx) => Promise<void>,
  fn: (tx: Tx) => Promise<T>,
): Promise<T> {
  return onConnection(pool, async (tx) => {
    const open = opening(pool);
    // A bare begin as before; with the limit, both in one round trip.
    await (open.length === 1 ? tx.query('begin') : runPipeline(tx, open));
    await setup(tx);
    const result = await fn(tx);
    await tx.query('commit');
    return result;
  });
}

/** True when the claims name a user, whose account and session the database must vouch for. */
function namesUser(claims: Claims): boolean {
  return typeof claims.sub === 'string' && claims.sub !== '' && claims.role !== 'anon';
}

/**
 * The statement that opens a caller's transaction: its settings, then (for a user) the check that
 * the account and the token's session still stand (migration 0045). A token outlives a sign-out,
 * a ban or a deletion; this check refuses it at once, on every path that acts for a caller. The
 * settings are a materialised CTE so they are in place before the check reads the claims.
 */
function callerSetupText(settings: string, claims: Claims): string {
  if (!namesUser(claims)) return settings;
  return `with settings as materialized (${settings}) select internal.require_active_caller() from settings`;
}

/**
 * Runs fn in one transaction as the role named by the claims, with request.jwt.claims set so
 * auth.uid(), auth.role() and auth.jwt() answer for the caller. RLS policies then decide.
 */
export function withRls<T>(
  pool: Pool,
  claims: Claims,
  fn: (tx: Tx) => Promise<T>,
  options: { readOnly?: boolean; settings?: readonly (readonly [string, string])[] } = {},
): Promise<T> {
  if (!REQUEST_ROLES.includes(claims.role)) {
    return Promise.reject(new Error(`Refusing to run as unknown role ${String(claims.role)}`));
  }
  const extra = options.settings ?? [];
  return inTransaction(
    pool,
    async (tx) => {
      // set_config('role', …, true) is SET LOCAL ROLE with the role as a parameter; a read-only
      // transaction (reads over GET) refuses writes, as PostgREST's does. The statement timeout
      // rides in the same round trip and, being local, ends with the transaction.
      await tx.query(
        callerSetupText(
          `select set_config('request.jwt.claims', $1, true), set_config('role', $2, true),
                  set_config('transaction_read_only', $3, true), set_config('statement_timeout', $4, true)` +
            // (request settings such as the audit log's client address ride in the same statement)
            extra.map((_, i) => `, set_config($${5 + 2 * i}, $${6 + 2 * i}, true)`).join(''),
          claims,
        ),
        [
          JSON.stringify(claims),
          claims.role,
          options.readOnly ? 'on' : 'off',
          String(statementTimeoutOf(pool)),
          ...extra.flat(),
        ],
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

export interface Statement {
  text: string;
  values: readonly unknown[];
}

/**
 * withService for short transactions of trusted server work, two round trips shorter: the first
 * statement rides with the `begin` and the last (if fn names one) with the `commit`, each pair one
 * round trip of prepared statements with their values as parameters (pipeline.ts). An error
 * anywhere leaves the transaction aborted (PostgreSQL skips the rest of a pipeline after an error)
 * and it is rolled back, as in withService. When the last statement's rows decide the value, fn
 * names `valueFrom`; such a statement must raise to refuse, since the commit follows it unread.
 */
export async function withServiceFolded<T>(
  pool: Pool,
  first: Statement,
  fn: (
    tx: Tx,
    firstRows: Record<string, unknown>[],
  ) => Promise<
    { value: T; last?: Statement } | { last: Statement; valueFrom: (rows: Record<string, unknown>[]) => T }
  >,
): Promise<T> {
  return onConnection(pool, async (tx) => {
    const open = opening(pool);
    const opened = await runPipeline(tx, [...open, first]);
    const result = await fn(tx, opened[open.length] ?? []);
    if (!result.last) {
      await tx.query('commit');
      return (result as { value: T }).value;
    }
    const closed = await runPipeline(tx, [result.last, { text: 'commit', values: [] }]);
    return 'valueFrom' in result ? result.valueFrom(closed[0] ?? []) : result.value;
  });
}

/** `select set_config($1, $2, true), …` for n settings, written once per n. */
const setConfigTexts: string[] = [];
function setConfigText(n: number): string {
  return (setConfigTexts[n] ??=
    `select ${Array.from({ length: n }, (_, i) => `set_config($${2 * i + 1}, $${2 * i + 2}, true)`).join(', ')}`);
}

export interface CallerRoundTripOptions {
  readOnly: boolean;
  /** the driver gives up on an answer after this long (the connection is then destroyed) */
  readTimeoutMs: number;
  /**
   * Checked before the transaction commits; throwing rolls it back. Without it the commit ends
   * the same round trip. With it, the commit is a second one.
   */
  beforeCommit?: (row: Record<string, unknown> | undefined) => void;
  /** end with a rollback instead of a commit: the answer is real, its changes are not kept */
  rollback?: boolean;
  /** further transaction-local settings (e.g. TimeZone, search_path), set with the caller's */
  settings?: readonly (readonly [string, string])[];
}

/**
 * withRls for one statement, in one round trip: the caller's role, claims and statement timeout,
 * then the statement, as prepared statements of the connection with their values as parameters
 * (pipeline.ts), committed when the round trip ends unless a check must see the result first.
 * PostgreSQL skips the rest of a pipeline after an error and rolls its transaction back.
 */
export async function runAsCaller(
  pool: Pool,
  claims: Claims,
  statement: Statement,
  options: CallerRoundTripOptions,
): Promise<Record<string, unknown> | undefined> {
  const { beforeCommit, ...rest } = options;
  const results = await runStatementsAsCaller(pool, claims, [statement], {
    ...rest,
    ...(beforeCommit ? { beforeCommit: (r: Record<string, unknown>[][]) => beforeCommit(r[0]?.[0]) } : {}),
  });
  return results[0]?.[0];
}

/**
 * runAsCaller for several statements in the same round trip and transaction; answers every row of
 * each of them, in order.
 */
export async function runStatementsAsCaller(
  pool: Pool,
  claims: Claims,
  statements: readonly Statement[],
  options: Omit<CallerRoundTripOptions, 'beforeCommit'> & {
    beforeCommit?: (results: Record<string, unknown>[][]) => void;
  },
): Promise<Record<string, unknown>[][]> {
  if (!REQUEST_ROLES.includes(claims.role)) {
    throw new Error(`Refusing to run as unknown role ${String(claims.role)}`);
  }
  const end = options.rollback ? 'rollback' : 'commit';
  // Without an explicit begin, the round trip is one transaction that PostgreSQL commits when it
  // ends; a rollback, or a check before the commit, needs the transaction kept open.
  const explicit = options.rollback === true || options.beforeCommit !== undefined;
  const idleLimit = idleLimitPerTransactionOf(pool);
  const settings: (readonly [string, string])[] = [
    ['request.jwt.claims', JSON.stringify(claims)],
    ['role', claims.role],
    ['statement_timeout', String(statementTimeoutOf(pool))],
    ...(options.readOnly ? [['transaction_read_only', 'on'] as [string, string]] : []),
    // Only a transaction kept open past its round trip can sit idle in it (see `opening`).
    ...(explicit && idleLimit !== null
      ? [['idle_in_transaction_session_timeout', String(idleLimit)] as [string, string]]
      : []),
    ...(options.settings ?? []),
  ];
  const setup: Statement = {
    text: callerSetupText(setConfigText(settings.length), claims),
    values: settings.flat(),
  };
  const pipeline: Statement[] = explicit
    ? [{ text: 'begin', values: [] }, setup, ...statements]
    : [setup, ...statements];
  if (explicit && !options.beforeCommit) pipeline.push({ text: end, values: [] });
  const first = explicit ? 2 : 1;

  return onConnection(pool, async (tx) => {
    const results = await runPipeline(tx, pipeline, options.readTimeoutMs);
    const rows = statements.map((_, i) => results[first + i] ?? []);
    if (options.beforeCommit) {
      options.beforeCommit(rows);
      await tx.query(end);
    }
    return rows;
  });
}
