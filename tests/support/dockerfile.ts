// Test support: reads a Dockerfile into its stages and carries out their steps without a container
// runtime. Each stage gets its own folder standing for its WORKDIR; COPY fills it from the build
// context (the repository's files less .dockerignore) or from an earlier stage's folder, keeping
// modes, symbolic links and modification times as BuildKit does; RUN runs there as a non-root user.
// Instructions it does not model are refused, so the Dockerfile cannot say more than is proven.
import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lchownSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  utimesSync,
} from 'node:fs';
import path from 'node:path';

/** A command in exec form (an argument list) or shell form (run by /bin/sh -c). */
export type Command = string[] | string;

export interface CopyStep {
  kind: 'copy';
  line: number;
  from?: string;
  chown?: string;
  sources: string[];
  dest: string;
  workdir: string;
}

export interface RunStep {
  kind: 'run';
  line: number;
  command: Command;
  user: string;
  workdir: string;
  env: Record<string, string>;
}

export interface Stage {
  name: string;
  image: string;
  workdir: string;
  /** the USER in effect when WORKDIR created the folder, which then belongs to it */
  workdirOwner: string;
  user: string;
  env: Record<string, string>;
  steps: (CopyStep | RunStep)[];
  expose: number[];
  stopSignal?: string;
  healthcheck?: { options: Record<string, string>; command: Command };
  cmd?: Command;
}

/** Joins continued lines and drops comments; each entry is one instruction with its first line. */
function logicalLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let current: { line: number; text: string } | undefined;
  text.split('\n').forEach((raw, index) => {
    const trimmed = raw.trim();
    // Comment and empty lines vanish, also in the middle of a continued instruction.
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const continued = trimmed.endsWith('\\');
    const part = continued ? trimmed.slice(0, -1).trim() : trimmed;
    if (current) current.text += ' ' + part;
    else current = { line: index + 1, text: part };
    if (!continued) {
      out.push(current);
      current = undefined;
    }
  });
  if (current) out.push(current);
  return out;
}

/** Splits shell-like words, honouring single and double quotes and backslash escapes. */
export function words(text: string): string[] {
  const out: string[] = [];
  let word = '';
  let quote: string | null = null;
  let started = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < text.length) word += text[++i];
      else word += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      started = true;
    } else if (c === '\\' && i + 1 < text.length) {
      word += text[++i];
      started = true;
    } else if (/\s/.test(c)) {
      if (started) out.push(word);
      word = '';
      started = false;
    } else {
      word += c;
      started = true;
    }
  }
  if (quote) throw new Error(`unterminated quote in: ${text}`);
  if (started) out.push(word);
  return out;
}

function command(args: string, line: number): Command {
  if (!args.startsWith('[')) return args;
  const parsed: unknown = JSON.parse(args);
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((a) => typeof a === 'string')) {
    throw new Error(`Dockerfile line ${line}: the exec form must be a JSON array of strings`);
  }
  return parsed as string[];
}

/** Splits leading `--name=value` flags off a word list, refusing flags not in `known`. */
function flags(
  list: string[],
  known: string[],
  line: number,
): { flags: Record<string, string>; rest: string[] } {
  const found: Record<string, string> = {};
  let i = 0;
  for (; i < list.length && list[i]!.startsWith('--'); i++) {
    const match = /^--([a-z-]+)=(.*)$/.exec(list[i]!);
    if (!match || !known.includes(match[1]!)) {
      throw new Error(`Dockerfile line ${line}: ${list[i]} is not modelled by tests/support/dockerfile.ts`);
    }
    found[match[1]!] = match[2]!;
  }
  return { flags: found, rest: list.slice(i) };
}

export function parseDockerfile(text: string): Stage[] {
  const stages: Stage[] = [];
  for (const { line, text: instruction } of logicalLines(text)) {
    const space = instruction.search(/\s/);
    const keyword = (space < 0 ? instruction : instruction.slice(0, space)).toUpperCase();
    const args = space < 0 ? '' : instruction.slice(space + 1).trim();
    if (keyword === 'FROM') {
      const [image, as, name, ...extra] = words(args);
      if (!image || as?.toUpperCase() !== 'AS' || !name || extra.length > 0) {
        throw new Error(`Dockerfile line ${line}: every stage needs a name (FROM <image> AS <name>)`);
      }
      stages.push({
        name,
        image,
        workdir: '/',
        workdirOwner: 'root',
        user: 'root',
        env: {},
        steps: [],
        expose: [],
      });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`Dockerfile line ${line}: ${keyword} before the first FROM`);
    // Variables in anything but RUN would be substituted by the builder, which this does not model.
    if (keyword !== 'RUN' && keyword !== 'HEALTHCHECK' && keyword !== 'CMD' && args.includes('$')) {
      throw new Error(`Dockerfile line ${line}: variables in ${keyword} are not modelled`);
    }
    switch (keyword) {
      case 'ENV': {
        const list = words(args);
        if (list.length === 2 && !list[0]!.includes('=')) {
          stage.env = { ...stage.env, [list[0]!]: list[1]! };
          break;
        }
        const env = { ...stage.env };
        for (const pair of list) {
          const eq = pair.indexOf('=');
          if (eq <= 0) throw new Error(`Dockerfile line ${line}: ENV expects name=value pairs`);
          env[pair.slice(0, eq)] = pair.slice(eq + 1);
        }
        stage.env = env;
        break;
      }
      case 'USER':
        stage.user = args;
        break;
      case 'WORKDIR':
        if (!args.startsWith('/')) throw new Error(`Dockerfile line ${line}: WORKDIR must be absolute`);
        if (stage.workdir !== '/')
          throw new Error(`Dockerfile line ${line}: one WORKDIR per stage is modelled`);
        stage.workdir = path.posix.normalize(args);
        stage.workdirOwner = stage.user;
        break;
      case 'COPY': {
        if (args.startsWith('['))
          throw new Error(`Dockerfile line ${line}: COPY's JSON form is not modelled`);
        const parsed = flags(words(args), ['from', 'chown'], line);
        if (parsed.rest.length < 2)
          throw new Error(`Dockerfile line ${line}: COPY needs a source and a destination`);
        if (stage.workdir === '/')
          throw new Error(`Dockerfile line ${line}: COPY before WORKDIR is not modelled`);
        stage.steps.push({
          kind: 'copy',
          line,
          ...(parsed.flags.from ? { from: parsed.flags.from } : {}),
          ...(parsed.flags.chown ? { chown: parsed.flags.chown } : {}),
          sources: parsed.rest.slice(0, -1),
          dest: parsed.rest.at(-1)!,
          workdir: stage.workdir,
        });
        break;
      }
      case 'RUN':
        if (stage.workdir === '/')
          throw new Error(`Dockerfile line ${line}: RUN before WORKDIR is not modelled`);
        stage.steps.push({
          kind: 'run',
          line,
          command: command(args, line),
          user: stage.user,
          workdir: stage.workdir,
          env: { ...stage.env },
        });
        break;
      case 'EXPOSE':
        stage.expose.push(...words(args).map((port) => Number.parseInt(port, 10)));
        break;
      case 'STOPSIGNAL':
        stage.stopSignal = args;
        break;
      case 'HEALTHCHECK': {
        const cmdAt = args.search(/(^|\s)CMD\s/);
        if (cmdAt < 0) throw new Error(`Dockerfile line ${line}: HEALTHCHECK needs a CMD`);
        const parsed = flags(
          words(args.slice(0, cmdAt)),
          ['interval', 'timeout', 'start-period', 'retries'],
          line,
        );
        const commandText = args
          .slice(cmdAt)
          .trim()
          .replace(/^CMD\s+/, '');
        stage.healthcheck = { options: parsed.flags, command: command(commandText, line) };
        break;
      }
      case 'CMD':
        stage.cmd = command(args, line);
        break;
      default:
        throw new Error(`Dockerfile line ${line}: ${keyword} is not modelled by tests/support/dockerfile.ts`);
    }
  }
  return stages;
}

/**
 * The .dockerignore rules as Docker applies them: patterns relative to the context root, `*` and
 * `?` within one path segment, `**` across segments, `!` re-including, the last matching rule
 * winning, and a rule that matches a folder covering everything in it.
 */
export function dockerignoreMatcher(text: string): (file: string) => boolean {
  const rules = text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const negated = line.startsWith('!');
      const pattern = path.posix.normalize((negated ? line.slice(1) : line).trim()).replace(/^\/+|\/+$/g, '');
      let source = '';
      for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i]!;
        if (c === '*' && pattern[i + 1] === '*') {
          i++;
          if (pattern[i + 1] === '/') {
            i++;
            source += '(?:.*/)?';
          } else source += '.*';
        } else if (c === '*') source += '[^/]*';
        else if (c === '?') source += '[^/]';
        else source += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
      }
      return { negated, regex: new RegExp(`^${source}$`) };
    });
  return (file) => {
    const parts = file.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let ignored = false;
    for (const rule of rules) {
      if (prefixes.some((prefix) => rule.regex.test(prefix))) ignored = !rule.negated;
    }
    return ignored;
  };
}

/**
 * The build context of the repository at `repo`: its files as `docker build .` would send them
 * from this working tree (tracked and new files, their working-tree versions), less .dockerignore.
 */
export function contextFiles(repo: string): string[] {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: repo,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (listed.error || listed.status !== 0) {
    throw new Error(
      `git is needed to list the repository's files (${listed.error?.message ?? listed.stderr.trim()}); CI has it`,
    );
  }
  const ignorePath = path.join(repo, '.dockerignore');
  const ignored = existsSync(ignorePath)
    ? dockerignoreMatcher(readFileSync(ignorePath, 'utf8'))
    : () => false;
  return [...new Set(listed.stdout.split('\0'))]
    .filter((file) => file !== '' && !ignored(file))
    .filter((file) => existsSync(path.join(repo, file)) || isSymlink(path.join(repo, file)))
    .sort();
}

function isSymlink(file: string): boolean {
  try {
    return lstatSync(file).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Who stands for the Dockerfile's users: root stays root, any other user is `user`. */
export interface Builder {
  /** the non-root user every RUN runs as, and any non-root USER or --chown stands for */
  user: { uid: number; gid: number; name: string };
  /** false when the test itself runs unprivileged: files then belong to it whatever --chown says */
  root: boolean;
}

function isRoot(name: string | undefined): boolean {
  const user = (name ?? 'root').split(':')[0];
  return user === 'root' || user === '0';
}

function ownerOf(builder: Builder, name: string | undefined): { uid: number; gid: number } | null {
  if (!builder.root) return null;
  return isRoot(name) ? { uid: 0, gid: 0 } : builder.user;
}

/** Copies a file, folder or symbolic link with modes and modification times, links as links. */
function copyEntry(from: string, to: string, owner: { uid: number; gid: number } | null): void {
  const stat = lstatSync(from);
  if (stat.isSymbolicLink()) {
    symlinkSync(readlinkSync(from), to);
  } else if (stat.isDirectory()) {
    mkdirSync(to, { recursive: true });
    for (const name of readdirSync(from)) copyEntry(path.join(from, name), path.join(to, name), owner);
    chmodSync(to, stat.mode & 0o7777);
  } else {
    copyFileSync(from, to);
    chmodSync(to, stat.mode & 0o7777);
  }
  if (owner) lchownSync(to, owner.uid, owner.gid);
  // Last, once a folder's contents are in: writing them changed the folder's time.
  lutimesSync(to, stat.atime, stat.mtime);
}

/** Creates the folders on the way to `dir` below `root`, owned as the copy says. */
function makeParents(root: string, dir: string, owner: { uid: number; gid: number } | null): void {
  const relative = path.relative(root, dir);
  if (relative === '') return;
  let current = root;
  for (const part of relative.split(path.sep)) {
    current = path.join(current, part);
    if (!existsSync(current)) {
      mkdirSync(current);
      if (owner) lchownSync(current, owner.uid, owner.gid);
    }
  }
}

/** Maps a path inside a stage's image onto its folder; only paths under its WORKDIR are modelled. */
export function stagePath(stage: Stage, folder: string, imagePath: string): string {
  const absolute = path.posix.resolve(stage.workdir, imagePath);
  const relative = path.posix.relative(stage.workdir, absolute);
  if (relative.startsWith('..')) {
    throw new Error(`${imagePath} is outside stage ${stage.name}'s WORKDIR ${stage.workdir}: not modelled`);
  }
  return path.join(folder, relative);
}

export interface BuildOptions {
  stages: Stage[];
  /** the repository whose files form the build context */
  context: string;
  files: string[];
  /** an empty folder for the stages' folders */
  root: string;
  builder: Builder;
  /** the environment every RUN starts from (PATH, HOME, npm's cache), under the stage's ENV */
  baseEnv: Record<string, string>;
  log: (line: string) => void;
}

function copyStep(options: BuildOptions, stage: Stage, folders: Map<string, string>, step: CopyStep): void {
  const folder = folders.get(stage.name)!;
  const owner = ownerOf(options.builder, step.chown);
  const destination = stagePath(stage, folder, step.dest);
  const intoFolder = step.dest.endsWith('/') || step.dest === '.' || step.sources.length > 1;
  for (const source of step.sources) {
    if (/[*?[]/.test(source))
      throw new Error(`Dockerfile line ${step.line}: wildcards in COPY are not modelled`);
    if (step.from) {
      const fromStage = options.stages.find((s) => s.name === step.from);
      const fromFolder = folders.get(step.from);
      if (!fromStage || !fromFolder) {
        throw new Error(`Dockerfile line ${step.line}: no earlier stage named ${step.from}`);
      }
      const from = stagePath(fromStage, fromFolder, source);
      if (!existsSync(from))
        throw new Error(`Dockerfile line ${step.line}: ${source} does not exist in ${step.from}`);
      const isDir = lstatSync(from).isDirectory();
      const to = intoFolder && !isDir ? path.join(destination, path.basename(from)) : destination;
      makeParents(folder, path.dirname(to), owner);
      if (isDir && existsSync(to)) {
        for (const name of readdirSync(from)) copyEntry(path.join(from, name), path.join(to, name), owner);
        const stat = lstatSync(from);
        utimesSync(to, stat.atime, stat.mtime);
      } else copyEntry(from, to, owner);
      continue;
    }
    const relative = path.posix.normalize(source).replace(/^\.?\/+/, '');
    const all = relative === '.' || relative === '';
    const chosen = all
      ? options.files
      : options.files.filter((file) => file === relative || file.startsWith(relative + '/'));
    if (chosen.length === 0) {
      throw new Error(
        `Dockerfile line ${step.line}: ${source} is not in the build context (missing, or left out by .dockerignore)`,
      );
    }
    const single = !all && chosen.length === 1 && chosen[0] === relative;
    const base = all ? '' : single ? path.posix.dirname(relative) : relative;
    const folderTimes = new Map<string, string>();
    if (!all && !single) folderTimes.set(destination, path.join(options.context, relative));
    for (const file of chosen) {
      const inside = path.posix.relative(base === '.' ? '' : base, file);
      const to =
        single && !intoFolder
          ? destination
          : path.join(destination, single ? path.posix.basename(file) : inside);
      makeParents(folder, path.dirname(to), owner);
      copyEntry(path.join(options.context, file), to, owner);
      // The folders this copy made or filled take the times of the context's folders they stand for.
      for (let dir = path.posix.dirname(inside); !single && dir !== '.'; dir = path.posix.dirname(dir)) {
        folderTimes.set(path.join(destination, dir), path.join(options.context, base, dir));
      }
    }
    for (const [to, from] of [...folderTimes].sort((a, b) => b[0].length - a[0].length)) {
      const stat = lstatSync(from);
      utimesSync(to, stat.atime, stat.mtime);
    }
  }
}

/** Starts a Dockerfile command (exec or shell form) in `cwd` as the builder's unprivileged user. */
export function spawnCommand(
  command: Command,
  options: { cwd: string; env: Record<string, string>; builder: Builder; detached?: boolean },
): ChildProcessByStdio<null, Readable, Readable> {
  const [file, args] =
    typeof command === 'string' ? ['/bin/sh', ['-c', command]] : [command[0]!, command.slice(1)];
  return spawn(file, args, {
    cwd: options.cwd,
    env: options.env as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
    ...(options.builder.root ? { uid: options.builder.user.uid, gid: options.builder.user.gid } : {}),
  });
}

async function runStep(options: BuildOptions, folder: string, stage: Stage, step: RunStep): Promise<void> {
  if (isRoot(step.user)) {
    throw new Error(
      `Dockerfile line ${step.line}: RUN as root; every build step runs as an unprivileged USER`,
    );
  }
  const started = Date.now();
  const child = spawnCommand(step.command, {
    cwd: stagePath(stage, folder, step.workdir),
    env: { ...options.baseEnv, ...step.env },
    builder: options.builder,
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    // The tail is what explains a failure; npm ci and next build print a lot.
    output = (output + chunk.toString()).slice(-16_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve(status));
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (code !== 0) {
    throw new Error(
      `Dockerfile line ${step.line} (stage ${stage.name}) failed with ${code} after ${seconds} s:\n${output}`,
    );
  }
  options.log(`stage ${stage.name}, line ${step.line}: ${JSON.stringify(step.command)} took ${seconds} s`);
}

/** Carries out every stage in order; returns each stage's folder. */
export async function buildStages(options: BuildOptions): Promise<Map<string, string>> {
  const folders = new Map<string, string>();
  for (const stage of options.stages) {
    const folder = path.join(options.root, stage.name);
    mkdirSync(folder);
    // WORKDIR is created owned by the USER in effect when it was set (BuildKit).
    const owner = ownerOf(options.builder, stage.workdirOwner);
    if (owner) lchownSync(folder, owner.uid, owner.gid);
    folders.set(stage.name, folder);
    for (const step of stage.steps) {
      if (step.kind === 'copy') copyStep(options, stage, folders, step);
      else await runStep(options, folder, stage, step);
    }
  }
  return folders;
}
