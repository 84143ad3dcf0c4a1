// In charge of sending several statements to PostgreSQL in one round trip with their values as
// parameters: the extended protocol's Bind and Execute for each statement, then one Sync. Each
// statement is a prepared statement of its connection, named when its text is first sent there
// (Parse and Describe ride in the same message), so PostgreSQL parses it once per connection and
// can keep its plan; the results are read with the row descriptions recorded then (decision 0027).
// On a pool whose statements must not be named (behind a transaction-mode pooler, decision 0054)
// every statement is the unnamed one, parsed each time.
import { randomBytes } from 'node:crypto';
import pgUtils from 'pg/lib/utils.js';
import { preparesStatements, type PoolClient } from './pool.js';

export interface PipelineStatement {
  text: string;
  values: readonly unknown[];
}

interface FieldDescription {
  name: string;
  dataTypeID: number;
}

/** A statement prepared on one connection: its name there and the columns it answers. */
interface Prepared {
  /** '' for the unnamed statement (kept by PostgreSQL only until the next Parse) */
  name: string;
  /** null until the Describe that follows its Parse has been answered */
  fields: FieldDescription[] | null;
}

/**
 * Statements kept per connection. Each costs memory in its server process (the parse tree and,
 * once PostgreSQL settles on it, a plan), roughly in proportion to its text, so both their number
 * and their text are bounded; the least recently used is closed beyond either.
 */
export const MAX_PREPARED_PER_CONNECTION = 256;
export const MAX_PREPARED_TEXT_PER_CONNECTION = 256 * 1024;
/** A longer statement is parsed each time as the unnamed statement instead of being kept. */
export const MAX_KEPT_STATEMENT_TEXT = 8 * 1024;

/** What one connection keeps: its prepared statements by text, least recently used first. */
interface Kept {
  statements: Map<string, Prepared>;
  textLength: number;
}

const keptByConnection = new WeakMap<object, Kept>();
// Names differ between processes too, so a statement can never be taken for another process's
// through a pooler that shares server connections.
const NAME_PREFIX = `tenantry_${randomBytes(4).toString('hex')}_`;
let nextName = 0;

/** Errors after which the statements a pipeline used are not used again on that connection. */
const STALE_STATEMENT = new Set([
  '0A000', // cached plan must not change result type
  '26000', // prepared statement does not exist
]);

/** A statement text holding NUL, refused before it is sent, as PostgreSQL refuses a NUL value. */
export class NulInStatement extends Error {
  override name = 'NulInStatement';
  /** the SQLSTATE PostgreSQL itself gives a NUL in text */
  readonly code = '22021';
  readonly severity = 'ERROR';
}

/** The parts of pg's Connection the pipeline writes to (not in pg's published types). */
interface Connection {
  parse(message: { name: string; text: string; types: number[] }): void;
  describe(message: { type: 'S' | 'P'; name: string }): void;
  bind(message: {
    portal: string;
    statement: string;
    values: readonly unknown[];
    binary: boolean;
    valueMapper: (value: unknown) => unknown;
  }): void;
  execute(message: { portal: string; rows: number }): void;
  close(message: { type: 'S' | 'P'; name: string }): void;
  sync(): void;
  on(event: string, listener: (message: unknown) => void): void;
  off(event: string, listener: (message: unknown) => void): void;
  stream: { cork?: () => void; uncork?: () => void };
}

type TypeParsers = Pick<PoolClient, 'getTypeParser'>;
type Rows = Record<string, unknown>[];

/**
 * One pipeline as pg's client runs it (a "submittable": pg hands it the connection when it is the
 * client's turn and forwards the server's answers to its handle* methods).
 */
class StatementPipeline {
  /** read by pg: it gives up on the answer after this long and fails the callback */
  readonly query_timeout: number | undefined;
  callback: (error: Error | null, rows?: Rows[]) => void;
  private readonly results: Rows[] = [];
  /** the statement whose Execute is being answered */
  private current = 0;
  /**
   * Statements whose Describe is still to be answered, in order. An answer means the Parse before
   * it succeeded: only then is a statement to be kept recorded as kept.
   */
  private readonly describing: { text: string; prepared: Prepared; keep: boolean }[] = [];
  private readonly used: { text: string; prepared: Prepared }[] = [];
  private connection: Connection | undefined;
  private readonly onNoData = () => this.described([]);

  constructor(
    /** what this round trip runs (read by tests that count round trips) */
    readonly statements: readonly PipelineStatement[],
    private readonly types: TypeParsers,
    /** statements may be named and kept on this connection */
    private readonly prepares: boolean,
    timeoutMs: number | undefined,
    callback: (error: Error | null, rows?: Rows[]) => void,
  ) {
    this.query_timeout = timeoutMs;
    this.callback = callback;
    this.results = statements.map(() => []);
  }

  private kept(): Kept {
    const connection = this.connection!;
    let kept = keptByConnection.get(connection);
    if (!kept) {
      kept = { statements: new Map(), textLength: 0 };
      keptByConnection.set(connection, kept);
    }
    return kept;
  }

  private described(fields: FieldDescription[]): void {
    const next = this.describing.shift();
    if (!next) return;
    next.prepared.fields = fields;
    if (next.keep) {
      const kept = this.kept();
      kept.statements.set(next.text, next.prepared);
      kept.textLength += next.text.length;
    }
  }

  submit(connection: Connection): Error | null {
    // Statement text travels as a C string: a NUL would end it early and desynchronise the
    // connection. PostgreSQL text cannot hold one anyway; refuse as it refuses a NUL value.
    if (this.statements.some((s) => s.text.includes('\u0000'))) {
      return new NulInStatement('invalid byte sequence for encoding "UTF8": 0x00');
    }
    // Values become wire text before anything is sent, so a value the driver cannot convert
    // fails the whole pipeline before any statement of it runs.
    let values: unknown[][];
    try {
      values = this.statements.map((s) => s.values.map((v) => pgUtils.prepareValue(v)));
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
    this.connection = connection;
    connection.on('noData', this.onNoData);
    const kept = this.kept();
    connection.stream.cork?.();
    try {
      // Room for the statements this pipeline may keep: closing a statement cannot fail, so the
      // closes go first and are done whatever happens after them.
      const fresh = this.statements.filter((s) => this.keeps(s.text) && !kept.statements.has(s.text));
      const freshLength = fresh.reduce((sum, s) => sum + s.text.length, 0);
      for (const [text, prepared] of kept.statements) {
        if (
          kept.statements.size + fresh.length <= MAX_PREPARED_PER_CONNECTION &&
          kept.textLength + freshLength <= MAX_PREPARED_TEXT_PER_CONNECTION
        )
          break;
        kept.statements.delete(text);
        kept.textLength -= text.length;
        connection.close({ type: 'S', name: prepared.name });
      }
      const sent = new Map<string, Prepared>();
      for (const [index, statement] of this.statements.entries()) {
        const text = statement.text;
        let prepared = sent.get(text) ?? kept.statements.get(text);
        if (prepared && !sent.has(text)) {
          // Most recently used last: delete and set again.
          kept.statements.delete(text);
          kept.statements.set(text, prepared);
        } else if (!prepared) {
          const keep = this.keeps(text);
          prepared = { name: keep ? `${NAME_PREFIX}${(nextName++).toString(36)}` : '', fields: null };
          connection.parse({ name: prepared.name, text, types: [] });
          connection.describe({ type: 'S', name: prepared.name });
          this.describing.push({ text, prepared, keep });
          // The unnamed statement is replaced by the next Parse: never reused, even here.
          if (keep) sent.set(text, prepared);
        }
        this.used.push({ text, prepared });
        connection.bind({
          portal: '',
          statement: prepared.name,
          values: values[index]!,
          binary: false,
          valueMapper: (value) => value,
        });
        connection.execute({ portal: '', rows: 0 });
      }
    } finally {
      connection.sync();
      connection.stream.uncork?.();
    }
    return null;
  }

  /** Whether a statement of this text is prepared under a name and kept. */
  private keeps(text: string): boolean {
    return this.prepares && text.length <= MAX_KEPT_STATEMENT_TEXT;
  }

  handleRowDescription(message: { fields: FieldDescription[] }): void {
    this.described(message.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })));
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    const fields = this.used[this.current]?.prepared.fields;
    if (!fields) return;
    const row: Record<string, unknown> = {};
    for (let i = 0; i < fields.length; i++) {
      const raw = message.fields[i];
      const field = fields[i]!;
      row[field.name] =
        raw === null || raw === undefined
          ? null
          : (this.types.getTypeParser(field.dataTypeID, 'text') as (value: string) => unknown)(raw);
    }
    this.results[this.current]!.push(row);
  }

  handleCommandComplete(): void {
    this.current++;
  }

  handleEmptyQuery(): void {
    this.current++;
  }

  handlePortalSuspended(): void {
    // Never asked for: every Execute reads all rows.
  }

  handleCopyInResponse(connection: { sendCopyFail(message: string): void }): void {
    connection.sendCopyFail('COPY is not run through a statement pipeline');
  }

  handleCopyData(): void {
    // No COPY is ever started here.
  }

  handleError(error: Error): void {
    this.detach();
    const code = (error as { code?: unknown }).code;
    if (this.connection && typeof code === 'string' && STALE_STATEMENT.has(code)) {
      // A statement whose plan no longer fits, or that the server no longer has: parse afresh
      // next time, under a new name (the old one, if it still exists, is left unused).
      const kept = this.kept();
      for (const { text, prepared } of this.used) {
        if (kept.statements.get(text) === prepared) {
          kept.statements.delete(text);
          kept.textLength -= text.length;
        }
      }
    }
    this.callback(error);
  }

  handleReadyForQuery(): void {
    this.detach();
    this.callback(null, this.results);
  }

  private detach(): void {
    this.connection?.off('noData', this.onNoData);
  }
}

/**
 * Runs the statements on `client` in one round trip and answers each one's rows, in order.
 * Without an explicit `begin` among them they are one implicit transaction, committed at the
 * end (PostgreSQL commits at Sync) or, after an error, rolled back; the rest are then skipped.
 * `timeoutMs`: how long the driver waits for the answer before failing (the connection must then
 * be treated as broken).
 */
export function runPipeline(
  client: PoolClient,
  statements: readonly PipelineStatement[],
  timeoutMs?: number,
): Promise<Rows[]> {
  return new Promise((resolve, reject) => {
    const pipeline = new StatementPipeline(
      statements,
      client,
      preparesStatements(client),
      timeoutMs,
      (error, rows) => (error ? reject(error) : resolve(rows!)),
    );
    (client as unknown as { query(submittable: StatementPipeline): void }).query(pipeline);
  });
}
