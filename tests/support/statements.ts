// Test support: the statements a server's pool runs while something happens, to hold a request to
// its number of round trips (each client.query call is one message to PostgreSQL).
import type { Pool, PoolClient } from '../../src/server/db/pool.js';

export interface SentStatement {
  /** the name it is prepared under, when it is a named prepared statement */
  name?: string;
  text: string;
}

/** Every statement the pool's connections run while fn runs, in order. */
export async function statementsDuring(pool: Pool, fn: () => Promise<unknown>): Promise<SentStatement[]> {
  const statements: SentStatement[] = [];
  const restore: (() => void)[] = [];
  const watched = new WeakSet<PoolClient>(); // a connection may be checked out twice meanwhile
  const onAcquire = (client: PoolClient) => {
    if (watched.has(client)) return;
    watched.add(client);
    const query = client.query;
    client.query = ((...args: unknown[]) => {
      const first = args[0] as string | { text: string; name?: string };
      statements.push(typeof first === 'string' ? { text: first } : { name: first.name, text: first.text });
      return (query as (...a: unknown[]) => unknown).apply(client, args);
    }) as typeof client.query;
    restore.push(() => {
      client.query = query;
    });
  };
  pool.on('acquire', onAcquire);
  try {
    await fn();
  } finally {
    pool.off('acquire', onAcquire);
    for (const undo of restore) undo();
  }
  return statements;
}
