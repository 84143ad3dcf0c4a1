// In charge of stopping, from outside, a statement that a connection's driver has given up on:
// PostgreSQL's cancel request, sent on a fresh socket and keyed by the backend's process id and
// secret, which only the connection that was handed them can know.
import Connection from 'pg/lib/connection.js';
import type { PoolClient } from './pool.js';

/** What pg's client records about its backend (not in pg's published types). */
interface BackendKey {
  host?: string;
  port?: number;
  processID?: number | null;
  secretKey?: number | null;
}

/** How long the cancel request may take before it is abandoned; it is best effort. */
const CANCEL_TIMEOUT_MS = 2000;

/**
 * Asks PostgreSQL to cancel whatever `client`'s backend is running. Closing a connection does not
 * do that: a backend busy with a statement only notices its client has gone when it next writes,
 * so a statement the driver stopped waiting for would otherwise run on, holding its server slot
 * and CPU, until it ends by itself. Resolves once the request is sent (or could not be).
 */
export function cancelBackend(client: PoolClient): Promise<void> {
  const key = client as unknown as BackendKey;
  const { host, port, processID, secretKey } = key;
  if (!port || processID == null || secretKey == null) return Promise.resolve();
  return new Promise((resolve) => {
    const connection = new Connection();
    const done = () => {
      clearTimeout(timer);
      connection.stream.destroy();
      resolve();
    };
    const timer = setTimeout(done, CANCEL_TIMEOUT_MS);
    connection.on('error', done);
    connection.on('connect', () => {
      connection.cancel(processID, secretKey);
      // PostgreSQL closes the socket once it has read the request.
      connection.stream.once('close', done);
      connection.stream.end();
    });
    if (host?.startsWith('/')) connection.connect(`${host}/.s.PGSQL.${port}`);
    else connection.connect(port, host);
  });
}
