// In charge of handing the running process's shared objects (configuration, database pool) to the
// Next.js pages and server actions, which run in this same process but are bundled separately:
// main.ts registers them once on globalThis; pages read them here.
import type { Billing } from './billing/checkout.js';
import type { Config } from './config.js';
import type { Pool } from './db/pool.js';
import type { TokenSigner } from './identity/access-tokens.js';
import type { IdentityService } from './identity/service.js';

export interface Runtime {
  config: Config;
  pool: Pool;
  /** present when the full process runs (pages that sign people in need them) */
  identity?: IdentityService;
  signer?: TokenSigner;
  billing?: Billing;
}

const KEY = Symbol.for('tenantry.runtime');

export function registerRuntime(runtime: Runtime): void {
  (globalThis as Record<symbol, unknown>)[KEY] = runtime;
}

/** The running service's runtime; throws when pages are rendered outside `npm start`. */
export function getRuntime(): Runtime {
  const runtime = (globalThis as Record<symbol, unknown>)[KEY] as Runtime | undefined;
  if (!runtime) throw new Error('Tenantry runtime is not registered: start the app with `npm start`');
  return runtime;
}
