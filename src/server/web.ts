// In charge of the Next.js side of the process: making sure an up-to-date production build
// exists (building it on first start, or when the web sources changed), then loading its
// request handler. SKIP_WEB=1 serves the platform APIs alone.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from './logger.js';

export type WebHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

function newestMtime(entry: string): number {
  if (!existsSync(entry)) return 0;
  const stat = statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(entry).reduce(
    (max, name) => Math.max(max, newestMtime(path.join(entry, name))),
    stat.mtimeMs,
  );
}

/** True when there is no build, or a web source is newer than it. */
export function buildIsStale(dir: string): boolean {
  const buildId = path.join(dir, '.next', 'BUILD_ID');
  if (!existsSync(buildId)) return true;
  const built = statSync(buildId).mtimeMs;
  const sources = ['src', 'next.config.ts', 'package-lock.json'].map((p) => newestMtime(path.join(dir, p)));
  return Math.max(...sources) > built;
}

function build(dir: string, logger: Logger): void {
  logger.info('building the web app (first start, or its sources changed); this takes a minute');
  process.stdout.write('Building the web app (first start, or its sources changed)…\n');
  const require = createRequire(import.meta.url);
  const nextBin = require.resolve('next/dist/bin/next');
  const result = spawnSync(process.execPath, [nextBin, 'build'], {
    cwd: dir,
    stdio: 'inherit',
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', NODE_ENV: 'production' },
  });
  if (result.status !== 0) throw new Error(`next build failed with exit code ${result.status}`);
}

export async function loadWebHandler(logger: Logger): Promise<WebHandler | null> {
  if (process.env.SKIP_WEB === '1') return null;
  const dir = process.cwd();
  process.env.NEXT_TELEMETRY_DISABLED = '1';
  if (buildIsStale(dir)) build(dir, logger);
  const { default: next } = await import('next');
  const nextApp = next({ dev: false, dir });
  await nextApp.prepare();
  const handle = nextApp.getRequestHandler();
  return (req, res) => handle(req, res);
}
