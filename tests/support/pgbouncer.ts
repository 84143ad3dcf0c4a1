// Test support: a real PgBouncer (the system's package, e.g. Debian's 1.18 from
// `apt-get install pgbouncer`) in front of the suite's embedded PostgreSQL, in transaction mode
// with a few server connections, so consecutive transactions of one client land on different
// server connections as they do behind a managed platform's pooler.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { systemUser } from '../../src/server/db/embedded-setup.js';

const CANDIDATES = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'];

/** The pgbouncer binary (PGBOUNCER names another), or null when none is installed. */
export function findPgBouncer(): string | null {
  const named = process.env.PGBOUNCER;
  if (named) return existsSync(named) ? named : null;
  return CANDIDATES.find((candidate) => existsSync(candidate)) ?? null;
}

export interface PgBouncer {
  /** `databaseUrl` with its host and port replaced by PgBouncer's */
  through(databaseUrl: string): string;
  /** what PgBouncer printed (its log), for a failing test's message */
  log(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * The user, password and TCP port of a cluster URL. The suite's URLs may name the cluster's Unix
 * socket folder as their host; PgBouncer reaches the same cluster over loopback TCP, which it
 * listens on too.
 */
function clusterOf(databaseUrl: string): { user: string; password: string; port: number } {
  const match = /^postgres(?:ql)?:\/\/([^:@/]+):([^@/]*)@[^/]*:(\d+)\//.exec(databaseUrl);
  if (!match) throw new Error(`cannot read user, password and port from ${databaseUrl}`);
  return {
    user: decodeURIComponent(match[1]!),
    password: decodeURIComponent(match[2]!),
    port: Number(match[3]),
  };
}

/**
 * Starts PgBouncer in transaction mode in front of the cluster `databaseUrl` points at, every
 * database of it reachable under its own name, with `poolSize` server connections per database.
 * Nothing is ignored among the start-up parameters (no ignore_startup_parameters): what a stock
 * install refuses, the service must not send. As root it runs as the `postgres` system user,
 * since PgBouncer refuses to run as root.
 */
export async function startPgBouncer(
  binary: string,
  databaseUrl: string,
  options: { poolSize?: number } = {},
): Promise<PgBouncer> {
  const cluster = clusterOf(databaseUrl);
  const port = await freePort();
  const root = mkdtempSync(path.join(tmpdir(), 'tenantry-pgbouncer-'));
  const quote = (value: string) => `"${value.replace(/"/g, '""')}"`;
  writeFileSync(path.join(root, 'userlist.txt'), `${quote(cluster.user)} ${quote(cluster.password)}\n`);
  writeFileSync(
    path.join(root, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=127.0.0.1 port=${cluster.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = scram-sha-256',
      `auth_file = ${path.join(root, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${options.poolSize ?? 4}`,
      'max_client_conn = 500',
      'log_connections = 0',
      'log_disconnections = 0',
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  const runAs = asRoot ? systemUser('postgres') : null;
  if (asRoot && !runAs) throw new Error('running as root needs a postgres system user to run PgBouncer as');
  if (runAs) {
    chmodSync(root, 0o700);
    for (const file of ['', 'userlist.txt', 'pgbouncer.ini']) {
      chownSync(path.join(root, file), runAs.uid, runAs.gid);
    }
  }
  const output: string[] = [];
  const child: ChildProcess = spawn(
    binary,
    [...(runAs ? ['-u', 'postgres'] : []), path.join(root, 'pgbouncer.ini')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    output.splice(0, output.length - 200);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  for (let attempt = 0; !(await accepting(port)); attempt++) {
    if (child.exitCode !== null || attempt > 100) {
      child.kill('SIGKILL');
      rmSync(root, { recursive: true, force: true });
      throw new Error(`PgBouncer did not start:\n${output.join('')}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    through: (url) => {
      const database = /\/([^/?]+)(\?.*)?$/.exec(url)?.[1];
      if (!database) throw new Error(`no database name in ${url}`);
      const user = encodeURIComponent(cluster.user);
      const password = encodeURIComponent(cluster.password);
      return `postgres://${user}:${password}@127.0.0.1:${port}/${database}`;
    },
    log: () => output.join(''),
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT'); // immediate shutdown
        await exited;
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
