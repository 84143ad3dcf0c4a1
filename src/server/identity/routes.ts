// In charge of the /auth/v1 HTTP surface: a thin Hono adapter that checks the apikey, parses and
// validates input, calls IdentityService, and renders results and errors the way GoTrue does.
import { Hono, type Context } from 'hono';
import type { HttpBindings } from '@hono/node-server';
import { z } from 'zod';
import { readJsonBody } from '../http/body.js';
import { clientAddress } from '../http/client-address.js';
import { HttpError, isHttpError } from '../http/errors.js';
import { databaseUnavailable, isDatabaseUnavailable } from '../http/unavailable.js';
import { parseWith } from '../http/validate.js';
import type { TokenSigner } from './access-tokens.js';
import { resolveCaller, type Caller, type ProjectKeys } from './caller.js';
import { errors, oauthErrorFor } from './errors.js';
import type { IdentityService, RequestContext } from './service.js';
import { renderUser } from './users.js';
import type { Logger } from 'pino';

export interface IdentityRouteDeps {
  service: IdentityService;
  keys: ProjectKeys;
  signer: TokenSigner;
  trustProxy: boolean;
  autoconfirm: boolean;
  disableSignup: boolean;
  logger: Logger;
}

type Env = { Bindings: HttpBindings; Variables: { caller: Caller } };

const email = z
  .string({ error: 'must be a string' })
  .trim()
  .pipe(z.email({ error: 'is not a valid e-mail address' }));
const password = z.string({ error: 'must be a string' }).max(1024, 'is too long');
const metadata = z.record(z.string(), z.unknown());

const passwordGrantBody = z.object({
  email: z.string({ error: 'missing email or phone' }),
  password: z.string({ error: 'missing password' }),
});
const refreshGrantBody = z.object({
  refresh_token: z.string({ error: 'missing refresh_token' }).min(1, 'missing refresh_token'),
});
const signUpBody = z.object({ email, password, data: metadata.optional() });
const updateUserBody = z.object({
  email: email.optional(),
  password: password.optional(),
  data: metadata.optional(),
  app_metadata: z.unknown().optional(),
});
const adminCreateBody = z.object({
  email,
  password: password.optional(),
  email_confirm: z.boolean().optional(),
  user_metadata: metadata.optional(),
  app_metadata: metadata.optional(),
});
const banDuration = z.union([
  z.literal('none'),
  z.string().regex(/^\d+h$/, 'must be "none" or a number of hours like "24h"'),
]);
const adminUpdateBody = z.object({
  email: email.optional(),
  password: password.optional(),
  email_confirm: z.boolean().optional(),
  user_metadata: metadata.optional(),
  app_metadata: metadata.optional(),
  ban_duration: banDuration.optional(),
});
const inviteBody = z.object({ email, data: metadata.optional() });
const uuid = z.uuid({ error: 'user id must be a UUID' });

/** GoTrue's error body (legacy form auth-js reads via error_code) plus the spec's OAuth pair. */
export function renderAuthError(error: HttpError): Response {
  const body: Record<string, unknown> = {
    code: error.status,
    error_code: error.code,
    msg: error.message,
    error: oauthErrorFor(error.code),
    error_description: error.message,
  };
  if (error.code === 'weak_password') body.weak_password = { reasons: ['length'] };
  return new Response(JSON.stringify(body), {
    status: error.status,
    headers: { 'content-type': 'application/json', 'x-sb-error-code': error.code, ...error.headers },
  });
}

function requestContext(c: Context<Env>, trustProxy: boolean): RequestContext {
  return {
    ip: clientAddress(c.req.raw.headers, c.env?.incoming, trustProxy),
    userAgent: c.req.header('user-agent')?.slice(0, 512) ?? null,
  };
}

function requireUser(caller: Caller) {
  if (caller.kind !== 'user') throw errors.noAuthorization();
  return caller.claims;
}

function requireAdmin(caller: Caller): void {
  if (caller.kind !== 'service') throw errors.notAdmin();
}

const MAX_PER_PAGE = 1000;

/**
 * A paging parameter as GoTrue reads it: absent or empty (auth-js sends `?page=&per_page=` when
 * none is given) means the default; otherwise a positive whole number in plain digits.
 */
function pagingParameter(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = /^[0-9]{1,9}$/.test(raw) ? Number(raw) : 0;
  if (value < 1) throw errors.validation(`${name} must be a whole number from 1`);
  return value;
}

function banUntil(duration: string | undefined): Date | null | undefined {
  if (duration === undefined) return undefined;
  if (duration === 'none') return null;
  return new Date(Date.now() + Number.parseInt(duration, 10) * 3600_000);
}

export function identityRoutes(deps: IdentityRouteDeps): Hono<Env> {
  const app = new Hono<Env>();
  const { service } = deps;

  app.onError((error, c) => {
    if (isHttpError(error)) return renderAuthError(error);
    if (isDatabaseUnavailable(error)) return renderAuthError(databaseUnavailable(error));
    deps.logger.error({ err: error, path: c.req.path }, 'identity request failed');
    return renderAuthError(new HttpError(500, 'Internal server error', { code: 'unexpected_failure' }));
  });
  app.notFound(() => renderAuthError(new HttpError(404, 'Not found', { code: 'not_found' })));

  // Public discovery document: no apikey, like the Supabase gateway. HS256 keys are never listed.
  app.get('/.well-known/jwks.json', (c) =>
    c.json({ keys: [] }, 200, { 'cache-control': 'public, max-age=600' }),
  );

  app.use('*', async (c, next) => {
    c.set('caller', await resolveCaller(c.req.raw.headers, deps.keys, deps.signer));
    await next();
  });

  app.get('/health', (c) =>
    c.json({
      version: 'tenantry',
      name: 'GoTrue',
      description: 'GoTrue is a user registration and authentication API',
    }),
  );

  app.get('/settings', (c) =>
    c.json({
      external: { email: true, phone: false, anonymous_users: false },
      disable_signup: deps.disableSignup,
      mailer_autoconfirm: deps.autoconfirm,
      phone_autoconfirm: false,
      sms_provider: '',
      saml_enabled: false,
      passkeys_enabled: false,
    }),
  );

  app.post('/token', async (c) => {
    const grantType = c.req.query('grant_type');
    if (grantType !== 'password' && grantType !== 'refresh_token') {
      await readJsonBody(c.req.raw); // enforce the size cap even on requests we refuse
      throw errors.unsupportedGrant();
    }
    const body = await readJsonBody(c.req.raw);
    if (grantType === 'password') {
      const input = parseWith(passwordGrantBody, body);
      return c.json(
        await service.passwordGrant(input.email, input.password, requestContext(c, deps.trustProxy)),
      );
    }
    const input = parseWith(refreshGrantBody, body);
    return c.json(await service.refreshGrant(input.refresh_token));
  });

  app.post('/signup', async (c) => {
    const input = parseWith(signUpBody, await readJsonBody(c.req.raw));
    return c.json(await service.signUp(input, requestContext(c, deps.trustProxy)));
  });

  app.get('/user', async (c) => c.json(await service.currentUser(requireUser(c.get('caller')))));

  app.put('/user', async (c) => {
    const claims = requireUser(c.get('caller'));
    const input = parseWith(updateUserBody, await readJsonBody(c.req.raw));
    if (input.app_metadata !== undefined) throw errors.notAdmin();
    return c.json(await service.updateCurrentUser(claims, input));
  });

  app.post('/logout', async (c) => {
    const scope = c.req.query('scope') ?? 'global';
    if (scope !== 'global' && scope !== 'local' && scope !== 'others') {
      throw errors.validation('Unsupported logout scope: use global, local or others');
    }
    await service.signOut(requireUser(c.get('caller')), scope);
    return c.body(null, 204);
  });

  app.post('/invite', async (c) => {
    requireAdmin(c.get('caller'));
    const input = parseWith(inviteBody, await readJsonBody(c.req.raw));
    const user = await service.adminCreateUser({
      email: input.email,
      userMetadata: input.data ?? {},
      invited: true,
    });
    return c.json(renderUser(user));
  });

  app.get('/admin/users', async (c) => {
    requireAdmin(c.get('caller'));
    const page = pagingParameter('page', c.req.query('page'), 1);
    const perPage = Math.min(pagingParameter('per_page', c.req.query('per_page'), 50), MAX_PER_PAGE);
    const { users, total } = await service.adminListUsers(page, perPage);
    const lastPage = Math.max(1, Math.ceil(total / perPage));
    const base = new URL(c.req.url);
    const link = (p: number, rel: string) => {
      base.searchParams.set('page', String(p));
      base.searchParams.set('per_page', String(perPage));
      return `<${base.pathname}${base.search}>; rel="${rel}"`;
    };
    const links = [link(lastPage, 'last')];
    if (page < lastPage) links.unshift(link(page + 1, 'next'));
    return c.json({ users: users.map(renderUser), aud: 'authenticated' }, 200, {
      'x-total-count': String(total),
      link: links.join(', '),
    });
  });

  app.post('/admin/users', async (c) => {
    requireAdmin(c.get('caller'));
    const input = parseWith(adminCreateBody, await readJsonBody(c.req.raw));
    const user = await service.adminCreateUser({
      email: input.email,
      ...(input.password !== undefined ? { password: input.password } : {}),
      ...(input.email_confirm !== undefined ? { emailConfirm: input.email_confirm } : {}),
      ...(input.user_metadata ? { userMetadata: input.user_metadata } : {}),
      ...(input.app_metadata ? { appMetadata: input.app_metadata } : {}),
    });
    return c.json(renderUser(user));
  });

  app.get('/admin/users/:id', async (c) => {
    requireAdmin(c.get('caller'));
    return c.json(renderUser(await service.adminGetUser(parseWith(uuid, c.req.param('id')))));
  });

  app.put('/admin/users/:id', async (c) => {
    requireAdmin(c.get('caller'));
    const id = parseWith(uuid, c.req.param('id'));
    const input = parseWith(adminUpdateBody, await readJsonBody(c.req.raw));
    const bannedUntil = banUntil(input.ban_duration);
    const user = await service.adminUpdateUser(id, {
      ...(input.email !== undefined ? { email: input.email } : {}),
      ...(input.password !== undefined ? { password: input.password } : {}),
      ...(input.email_confirm !== undefined ? { emailConfirm: input.email_confirm } : {}),
      ...(input.user_metadata ? { userMetadata: input.user_metadata } : {}),
      ...(input.app_metadata ? { appMetadata: input.app_metadata } : {}),
      ...(bannedUntil !== undefined ? { bannedUntil } : {}),
    });
    return c.json(renderUser(user));
  });

  app.delete('/admin/users/:id', async (c) => {
    requireAdmin(c.get('caller'));
    const id = parseWith(uuid, c.req.param('id'));
    await readJsonBody(c.req.raw); // supabase-js sends {should_soft_delete}; deletion is always hard here
    await service.adminDeleteUser(id);
    return c.json({});
  });

  return app;
}
