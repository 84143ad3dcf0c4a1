// In charge of the /rest/v1 HTTP surface: a thin Hono adapter. It names the caller (apikey and
// bearer token), parses the request, runs it, and renders every error in PostgREST's format.
import { Hono } from 'hono';
import type { Pool } from '../db/pool.js';
import type { Claims } from '../db/transactions.js';
import { readJsonBody } from '../http/body.js';
import { HttpError, isHttpError } from '../http/errors.js';
import type { TokenSigner } from '../identity/access-tokens.js';
import { resolveCaller, type ProjectKeys } from '../identity/caller.js';
import type { Logger } from '../logger.js';
import { fromAuthError, renderError, toHttpError } from './errors.js';
import { execute } from './execute.js';
import { parseApiRequest } from './request.js';
import type { SchemaCache } from './schema-cache.js';

export interface DataApiDeps {
  pool: Pool;
  schemaCache: SchemaCache;
  keys: ProjectKeys;
  signer: TokenSigner;
  logger: Logger;
}

const BODY_METHODS = new Set(['POST', 'PATCH']);

export function dataApiRoutes(deps: DataApiDeps): Hono {
  const app = new Hono();

  app.all('/*', async (c) => {
    let role = 'anon';
    try {
      const caller = await resolveCaller(c.req.raw.headers, deps.keys, deps.signer).catch(
        (error: unknown) => {
          throw isHttpError(error) ? fromAuthError(error) : error;
        },
      );
      role = caller.claims.role;
      const url = new URL(c.req.url);
      const path = url.pathname.replace(/^\/rest\/v1/, '');
      const schema = await deps.schemaCache.get();
      const target = path.split('/').filter(Boolean);
      const argumentNames =
        target[0] === 'rpc' && target[1]
          ? new Set(
              (schema.functions.get(decodeURIComponent(target[1])) ?? []).flatMap((f) =>
                f.args.map((a) => a.name),
              ),
            )
          : new Set<string>();
      const request = parseApiRequest(c.req.method, path, url.searchParams, c.req.raw.headers, argumentNames);
      let body: unknown;
      if (BODY_METHODS.has(c.req.method)) {
        body = await readJsonBody(c.req.raw).catch((error: unknown) => {
          if (isHttpError(error) && error.code === 'bad_json') {
            throw new HttpError(400, 'Empty or invalid json', { code: 'PGRST102', details: error.message });
          }
          throw error;
        });
      }
      return await execute(deps.pool, { request, schema, claims: caller.claims as Claims, body });
    } catch (error) {
      const known = toHttpError(error, role);
      if (known) return renderError(known);
      deps.logger.error({ err: error, path: c.req.path, method: c.req.method }, 'data API request failed');
      return renderError(new HttpError(500, 'Internal server error', { code: 'PGRST500' }));
    }
  });
  return app;
}
