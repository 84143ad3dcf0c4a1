// In charge of the Next.js side of the process: loading the production build's request handler.
// Until the web application exists (or when the build is missing) the process serves the
// platform APIs alone.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from './logger.js';

export type WebHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export async function loadWebHandler(logger: Logger): Promise<WebHandler | null> {
  const dir = process.cwd();
  if (!existsSync(path.join(dir, '.next', 'BUILD_ID'))) {
    logger.warn('no Next.js build found; serving the platform APIs only');
    return null;
  }
  const { default: next } = await import('next');
  const nextApp = next({ dev: false, dir });
  await nextApp.prepare();
  const handle = nextApp.getRequestHandler();
  return (req, res) => handle(req, res);
}
