// Test support: the statements a server's pool runs while something happens, to hold a request to
// its number of round trips (each client.query call is one round trip to PostgreSQL; a pipeline of
// several statements is recorded as their texts joined with "; ").
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
      const first = args[0] as string | { text: string; name?: string } | { statements: { text: string }[] };
      if (typeof first === 'string') statements.push({ text: first });
      else if ('statements' in first)
        statements.push({ text: first.statements.map((s) => s.text).join('; ') });
      else statements.push({ name: first.name, text: first.text });
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
