// In charge of the OAuth 2.1 server's HTTP surface under /auth/v1 (decision 0093), served only while
// OAUTH_SERVER_ENABLED is on: the client's endpoints (authorize, token, discovery), which a
// browser or a client reaches without an apikey, and the signed-in user's (consent, grants).
import type { Context, Hono } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import { readJsonBody } from '../../http/body.js';
import type { Caller } from '../caller.js';
import { errors } from '../errors.js';
import { requestContextOf, requireLiveUser } from '../flows/context.js';
import type { IdentityService } from '../service.js';
import {
  authorizationDetails,
  decideAuthorization,
  startAuthorization,
  type Approver,
} from './authorizations.js';
import { requireOwnSession } from './client-sessions.js';
import { authenticateClient, readTokenRequest, tokenErrors } from './client-auth.js';
import { listGrants, revokeGrant } from './grants.js';
import { authorizationServerMetadata } from './metadata.js';
import { exchangeCode, refreshForClient } from './token.js';

type Env = { Bindings: HttpBindings; Variables: { caller: Caller } };

/** Tokens and their errors are never cached (RFC 6749 §5.1). */
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** Before the apikey check: what a browser navigation or an OAuth client calls. */
export function oauthServerClientRoutes(app: Hono<Env>, service: IdentityService, trustProxy: boolean) {
  const { deps } = service;
  app.get('/.well-known/oauth-authorization-server', (c) =>
    c.json(authorizationServerMetadata(deps.signer.issuer, deps.email.authUrl), 200, {
      'cache-control': 'public, max-age=600',
    }),
  );

  app.get('/oauth/authorize', async (c) => {
    const q = (name: string) => c.req.query(name);
    const { ip } = requestContextOf(c.req.raw.headers, c.env?.incoming, trustProxy);
    const limits = deps.settings.rateLimits;
    const location = await startAuthorization(
      deps.pool,
      deps.oauthServer.authorizationUrl,
      {
        client_id: q('client_id'),
        redirect_uri: q('redirect_uri'),
        response_type: q('response_type'),
        scope: q('scope'),
        state: q('state'),
        code_challenge: q('code_challenge'),
        code_challenge_method: q('code_challenge_method'),
      },
      { ip, max: limits.signInPerAddress, windowSeconds: limits.windowSeconds },
    );
    return c.redirect(location, 302);
  });

  app.post('/oauth/token', async (c) => {
    const params = await readTokenRequest(c.req.raw);
    const client = await authenticateClient(deps.pool, c.req.header('authorization') ?? null, params);
    const grantType = params.get('grant_type') ?? '';
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token')
      throw tokenErrors.unsupportedGrant();
    if (!client.grantTypes.includes(grantType)) {
      throw tokenErrors.unauthorizedClient(`The client may not use the ${grantType} grant`);
    }
    const context = requestContextOf(c.req.raw.headers, c.env?.incoming, trustProxy);
    const tokens =
      grantType === 'authorization_code'
        ? await exchangeCode(deps, client, params, context)
        : await refreshForClient(deps, client, params, context);
    return c.json(tokens, 200, NO_STORE);
  });
}

/** The signed-in person behind the request, never a token that was issued to an OAuth client. */
async function approverOf(c: Context<Env>, service: IdentityService): Promise<Approver> {
  const caller = c.get('caller');
  if (caller.kind !== 'user') throw errors.noAuthorization();
  const { pool } = service.deps;
  const user = await requireLiveUser(pool, caller.claims);
  await requireOwnSession(pool, caller.claims);
  return { userId: user.id, email: user.email ?? '' };
}

/** After the apikey check: the consent page's calls and the user's grants. */
export function oauthServerUserRoutes(app: Hono<Env>, service: IdentityService) {
  const { pool } = service.deps;
  app.get('/oauth/authorizations/:authorizationId', async (c) => {
    const approver = await approverOf(c, service);
    return c.json(await authorizationDetails(pool, c.req.param('authorizationId'), approver));
  });
  app.post('/oauth/authorizations/:authorizationId/consent', async (c) => {
    const approver = await approverOf(c, service);
    const body = (await readJsonBody(c.req.raw)) as { action?: unknown } | undefined;
    const action = typeof body?.action === 'string' ? body.action : undefined;
    return c.json(await decideAuthorization(pool, c.req.param('authorizationId'), approver, action));
  });
  app.get('/user/oauth/grants', async (c) => {
    const approver = await approverOf(c, service);
    return c.json(await listGrants(pool, approver.userId));
  });
  app.delete('/user/oauth/grants', async (c) => {
    const approver = await approverOf(c, service);
    await revokeGrant(pool, approver.userId, c.req.query('client_id'));
    return c.body(null, 204);
  });
}
