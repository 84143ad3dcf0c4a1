// In charge of the Next.js side of the process: making sure an up-to-date production build
// exists (building it on first start, or when the web sources changed), then loading its
// request handler. SKIP_WEB=1 serves the platform APIs alone and never touches Next.js.
import { spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export type WebHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/**
 * Everything a build depends on. All of src/ counts, not only src/app/: pages and server
 * actions bundle the src/server/ modules they import.
 */
export const BUILD_INPUTS = [
  'src',
  'public',
  'next.config.ts',
  'postcss.config.mjs',
  'scripts/js-specifiers-loader.mjs',
  'tsconfig.json',
  'package-lock.json',
];

export function webEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.SKIP_WEB !== '1';
}

function newestMtime(entry: string): number {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  // A directory's own mtime changes when a file is deleted or renamed, which also needs a rebuild.
  return readdirSync(entry).reduce(
    (max, name) => Math.max(max, newestMtime(path.join(entry, name))),
    stat.mtimeMs,
  );
}

/** True when there is no complete build in `dir`, or one of its inputs is newer than it. */
export function webBuildIsStale(dir: string): boolean {
  // next build writes BUILD_ID last, so an interrupted build never looks complete.
  const buildId = path.join(dir, '.next', 'BUILD_ID');
  if (!existsSync(buildId)) return true;
  const built = statSync(buildId).mtimeMs;
  return BUILD_INPUTS.some((input) => newestMtime(path.join(dir, input)) > built);
}

/** Runs `next build` in `dir`, its output going to ours; rejects when it fails. */
export async function buildWebApp(dir: string): Promise<void> {
  const nextBin = createRequire(import.meta.url).resolve('next/dist/bin/next');
  const child = spawn(process.execPath, [nextBin, 'build'], {
    cwd: dir,
    stdio: 'inherit',
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' },
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (status) => resolve(status));
  });
  if (code !== 0) {
    throw new Error(
      `next build failed (exit code ${code}); see its output above, or set SKIP_WEB=1 to serve the APIs alone`,
    );
  }
}

/** True when the path of a request URL percent-decodes (each segment, as a router would). */
export function decodablePath(url: string | undefined): boolean {
  const path = (url ?? '/').split(/[?#]/, 1)[0]!;
  try {
    for (const segment of path.split('/')) decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

/** Builds the web app when there is no build or it is older than its sources. */
export async function ensureWebBuild(dir = process.cwd()): Promise<void> {
  if (!webEnabled() || !webBuildIsStale(dir)) return;
  const reason = existsSync(path.join(dir, '.next', 'BUILD_ID')) ? 'its sources changed' : 'first start';
  process.stdout.write(`building the web app (${reason})…\n`);
  const started = Date.now();
  await buildWebApp(dir);
  process.stdout.write(`web app built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

/**
 * Loads the production build's request handler; null when SKIP_WEB=1. Next needs the address it
 * is served on: a server action that redirects renders the target by requesting it from itself.
 *
 * Next is given a stand-in for the HTTP server. Handed none, it attaches an 'upgrade' listener to
 * the server of the first request it answers (ours), and its production handler never answers an
 * upgrade it does not proxy: every `Upgrade:` request on any path would then hold its socket,
 * beyond every server timeout, for as long as the client liked. Next serves upgrades only for
 * `next dev` (its hot-reload socket), which this process never runs; the process's own server
 * decides every upgrade (http/upgrades.ts).
 */
export async function loadWebHandler(
  dir = process.cwd(),
  listen: { hostname: string; port: number } = { hostname: 'localhost', port: 3000 },
): Promise<WebHandler | null> {
  if (!webEnabled()) return null;
  process.env.NEXT_TELEMETRY_DISABLED = '1';
  const { default: next } = await import('next');
  const httpServer = new EventEmitter() as Server;
  const nextApp = next({ dev: false, dir, hostname: listen.hostname, port: listen.port, httpServer });
  await nextApp.prepare();
  const handle = nextApp.getRequestHandler();
  return (req, res) => {
    // Next answers a path it cannot percent-decode (/w/%ZZ) with a bare 500; such an address
    // names nothing, so it gets the app's own "not found" page instead.
    if (!decodablePath(req.url)) req.url = '/not-found';
    return handle(req, res);
  };
}
