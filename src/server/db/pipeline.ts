// In charge of sending several statements to PostgreSQL in one round trip with their values as
// parameters: the extended protocol's Bind and Execute for each statement, then one Sync. Each
// statement is a prepared statement of its connection, named when its text is first sent there
// (Parse and Describe ride in the same message), so PostgreSQL parses it once per connection and
// can keep its plan; the results are read with the row descriptions recorded then (decision 0027).
import pgUtils from 'pg/lib/utils.js';
import type { PoolClient } from './pool.js';

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
  name: string;
  /** null until the Describe that follows its Parse has been answered */
  fields: FieldDescription[] | null;
}

/**
 * Statements kept per connection. Each costs memory in its server process (the parse tree and,
 * once PostgreSQL settles on it, a plan); the least recently used is closed beyond this.
 */
export const MAX_PREPARED_PER_CONNECTION = 256;

/** Per connection, its prepared statements by text, least recently used first. */
const preparedByConnection = new WeakMap<object, Map<string, Prepared>>();
let nextName = 0;

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
  /** statements whose Parse was sent here, in order: each ParseComplete records the next one */
  private readonly parsing: { text: string; prepared: Prepared }[] = [];
  /** statements whose Describe is still to be answered, in order */
  private readonly describing: Prepared[] = [];
  private readonly used: Prepared[] = [];
  private connection: Connection | undefined;
  private readonly onParseComplete = () => {
    const next = this.parsing.shift();
    if (next) this.known().set(next.text, next.prepared);
  };
  private readonly onNoData = () => {
    const described = this.describing.shift();
    if (described) described.fields = [];
  };

  constructor(
    /** what this round trip runs (read by tests that count round trips) */
    readonly statements: readonly PipelineStatement[],
    private readonly types: TypeParsers,
    timeoutMs: number | undefined,
    callback: (error: Error | null, rows?: Rows[]) => void,
  ) {
    this.query_timeout = timeoutMs;
    this.callback = callback;
    this.results = statements.map(() => []);
  }

  private known(): Map<string, Prepared> {
    const connection = this.connection!;
    let known = preparedByConnection.get(connection);
    if (!known) {
      known = new Map();
      preparedByConnection.set(connection, known);
    }
    return known;
  }

  submit(connection: Connection): Error | null {
    // Values become wire text before anything is sent, so a value the driver cannot convert
    // fails the whole pipeline before any statement of it runs.
    let values: unknown[][];
    // Statement text travels as a C string: a NUL would end it early and desynchronise the
    // connection. PostgreSQL text cannot hold one anyway; refuse as it refuses a NUL value.
    if (this.statements.some((s) => s.text.includes('\u0000'))) {
      return new NulInStatement('invalid byte sequence for encoding "UTF8": 0x00');
    }
    try {
      values = this.statements.map((s) => s.values.map((v) => pgUtils.prepareValue(v)));
    } catch (error) {
      return error instanceof Error ? error : new Error(String(error));
    }
    this.connection = connection;
    connection.on('parseComplete', this.onParseComplete);
    connection.on('noData', this.onNoData);
    const known = this.known();
    connection.stream.cork?.();
    try {
      // Room for the statements this pipeline may add: closing a statement cannot fail, so the
      // closes go first and are done whatever happens after them.
      const fresh = this.statements.filter((s) => !known.get(s.text)?.fields).length;
      for (const [text, prepared] of known) {
        if (known.size + fresh <= MAX_PREPARED_PER_CONNECTION) break;
        known.delete(text);
        connection.close({ type: 'S', name: prepared.name });
      }
      const sent = new Map<string, Prepared>();
      for (const [index, statement] of this.statements.entries()) {
        let prepared = sent.get(statement.text) ?? known.get(statement.text);
        if (prepared?.fields) {
          // Most recently used last: delete and set again.
          known.delete(statement.text);
          known.set(statement.text, prepared);
        } else if (!prepared) {
          prepared = { name: `tenantry_${(nextName++).toString(36)}`, fields: null };
          connection.parse({ name: prepared.name, text: statement.text, types: [] });
          connection.describe({ type: 'S', name: prepared.name });
          this.parsing.push({ text: statement.text, prepared });
          this.describing.push(prepared);
          sent.set(statement.text, prepared);
        }
        this.used.push(prepared);
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

  handleRowDescription(message: { fields: FieldDescription[] }): void {
    const described = this.describing.shift();
    if (described) described.fields = message.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID }));
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    const fields = this.used[this.current]?.fields;
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
    this.callback(error);
  }

  handleReadyForQuery(): void {
    this.detach();
    this.callback(null, this.results);
  }

  private detach(): void {
    this.connection?.off('parseComplete', this.onParseComplete);
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
    const pipeline = new StatementPipeline(statements, client, timeoutMs, (error, rows) =>
      error ? reject(error) : resolve(rows!),
    );
    (client as unknown as { query(submittable: StatementPipeline): void }).query(pipeline);
  });
}
