// In charge of the /auth/v1 HTTP surface: a thin Hono adapter that checks the apikey, parses and
// validates input, calls IdentityService, and renders results and errors the way GoTrue does.
import { normalizePhone } from './phone-numbers.js';
import { phoneErrors, readChannel } from './sms/phone-codes.js';
import { Hono, type Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { HttpBindings } from '@hono/node-server';
import { readJsonBody } from '../http/body.js';
import { apiInputOf, toResponse, type ApiInput, type Reply } from '../http/reply.js';
import { HttpError } from '../http/errors.js';
import { parseWith } from '../http/validate.js';
import type { TokenSigner } from './access-tokens.js';
import { resolveCaller, type Caller, type ProjectKeys } from './caller.js';
import { requireOwnSession } from './oauth-server/client-sessions.js';
import { banEnds } from './durations.js';
import { authError, authErrorReply, authFailure, errors } from './errors.js';
import { parsePkceParams } from './pkce.js';
import {
  adminCreateBody,
  adminDeleteBody,
  adminUpdateBody,
  anonymousSignUpBody,
  challengeFactorBody,
  email as emailSchema,
  enrollFactorBody,
  factorId as factorIdSchema,
  GENERATE_LINK_TYPES,
  generateLinkBody,
  inviteBody,
  magicLinkBody,
  otpBody,
  passkeyCeremonyBody,
  passkeyUpdateBody,
  recoverBody,
  resendBody,
  signUpBody,
  phoneSignUpBody,
  signUpTarget,
  updateUserBody,
  uuid,
  verifyBody,
  verifyFactorBody,
} from './request-schemas.js';
import { auditRequest } from './audit.js';
import { requestContextOf } from './flows/context.js';
import type { IdentityService, RequestContext } from './service.js';
import type { AuthorizeInput } from './flows/oauth.js';
import { LINK_BINDING_COOKIE, linkBindingCookieOptions, newLinkBinding } from './oauth/link-binding.js';
import { KNOWN_PROVIDERS } from './oauth/providers.js';
import type { VerifyInput } from './flows/verify.js';
import { renderUser } from './users.js';
import * as oauthClients from './oauth-server/clients.js';
import { oauthServerClientRoutes, oauthServerUserRoutes } from './oauth-server/routes.js';
import { answerUnserved, refuseHead, ServedMethods } from './unserved.js';
import type { Logger } from 'pino';

/** Where the platform mounts the identity API. */
export const IDENTITY_BASE_PATH = '/auth/v1';

export interface IdentityRouteDeps {
  service: IdentityService;
  keys: ProjectKeys;
  signer: TokenSigner;
  trustProxy: boolean;
  autoconfirm: boolean;
  disableSignup: boolean;
  anonymousSignIns: boolean;
  logger: Logger;
  /** POST /token, shared with the server's node:http listener */
  tokenHandler: (input: ApiInput) => Promise<Reply>;
}

type Env = { Bindings: HttpBindings; Variables: { caller: Caller } };

/** GoTrue's error body, as a web Response. */
export function renderAuthError(error: HttpError): Response {
  return toResponse(authErrorReply(error));
}

function requestContext(c: Context<Env>, trustProxy: boolean): RequestContext {
  return requestContextOf(c.req.raw.headers, c.env?.incoming, trustProxy);
}

/** redirect_to as auth-js sends it (a query parameter), and the Referer GoTrue falls back to. */
function redirectInput(c: Context<Env>) {
  return { redirectTo: c.req.query('redirect_to'), referer: c.req.header('referer') ?? null };
}

/** /authorize's query as auth-js sends it; other parameters go on to the provider. */
function oauthAuthorizeInput(
  c: Context<Env>,
  trustProxy: boolean,
  linkingUserId: string | null,
): AuthorizeInput {
  return {
    provider: c.req.query('provider') ?? '',
    scopes: c.req.query('scopes') ?? '',
    pkce: parsePkceParams(c.req.query('code_challenge'), c.req.query('code_challenge_method')),
    queryParams: c.req.query(),
    linkingUserId,
    ip: requestContext(c, trustProxy).ip,
    ...redirectInput(c),
  };
}

const RESEND_TYPES = ['signup', 'email_change', 'sms', 'phone_change'] as const;

/** POST /verify's body, checked as GoTrue's VerifyParams.Validate checks it. */
function verifyInput(body: unknown): VerifyInput {
  const input = parseWith(verifyBody, body);
  const type = input.type ?? '';
  if (!type) throw errors.validation('Verify requires a verification type');
  const token = input.token ?? '';
  const tokenHash = input.token_hash ?? '';
  if ((token === '') === (tokenHash === '')) {
    throw errors.validation('Verify requires either a token or a token hash');
  }
  if (tokenHash) {
    if (input.email || input.phone || input.redirect_to) {
      throw errors.validation('Only the token_hash and type should be provided');
    }
    return { type, tokenHash };
  }
  if (input.phone && !input.email) return { type, phone: normalizePhone(input.phone), token };
  if (!input.email || input.phone) {
    throw errors.validation('Only an email address or phone number should be provided on verify');
  }
  const email = emailSchema.safeParse(input.email);
  if (!email.success) throw authError(422, 'validation_failed', 'Invalid email format');
  return { type, email: email.data, token };
}

function requireUser(caller: Caller) {
  if (caller.kind !== 'user') throw errors.noAuthorization();
  return caller.claims;
}

/** GoTrue keeps second factors from anonymous users: a factor needs an account to protect. */
function requireNamedUser(caller: Caller) {
  const claims = requireUser(caller);
  if (claims.is_anonymous) throw errors.anonymousNotAllowed();
  return claims;
}

/** GoTrue answers a factor id that is not a UUID with 404 (there is no such factor). */
function factorIdParam(raw: string | undefined): string {
  const parsed = factorIdSchema.safeParse(raw);
  if (!parsed.success) throw authError(404, 'validation_failed', 'factor_id must be an UUID');
  return parsed.data;
}

/** GoTrue answers a passkey id that is not a UUID as an unknown passkey. */
function passkeyIdParam(raw: string | undefined): string {
  const parsed = factorIdSchema.safeParse(raw);
  if (!parsed.success) throw authError(404, 'validation_failed', 'Passkey not found');
  return parsed.data;
}

/** The switch comes first (GoTrue's requirePasskeyEnabled), then the session, then a named account. */
function passkeyCaller(caller: Caller, enabled: boolean, named: boolean) {
  if (!enabled) throw authError(404, 'passkey_disabled', 'Passkeys are disabled');
  return named ? requireNamedUser(caller) : requireUser(caller);
}

/** A ceremony's body, checked as GoTrue checks it: both members present, the challenge id a UUID. */
function passkeyCeremony(body: unknown, enabled: boolean) {
  if (!enabled) throw authError(404, 'passkey_disabled', 'Passkeys are disabled');
  const input = parseWith(passkeyCeremonyBody, body ?? {});
  if (input.credential === undefined || input.credential === null)
    throw errors.validation('credential is required');
  const challengeId = uuid.safeParse(input.challenge_id);
  if (!challengeId.success) throw errors.validation('challenge_id must be a valid UUID');
  return { challengeId: challengeId.data, credential: input.credential };
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

/** GoTrue's Link header for a listing: next (when there is one) and last. */
function pageLinks(requestUrl: string, page: number, perPage: number, total: number): string {
  // GoTrue's count of pages: 0 when there is nothing (supabase-js reports it as lastPage).
  const lastPage = Math.ceil(total / perPage);
  const base = new URL(requestUrl);
  const link = (p: number, rel: string) => {
    base.searchParams.set('page', String(p));
    base.searchParams.set('per_page', String(perPage));
    return `<${base.pathname}${base.search}>; rel="${rel}"`;
  };
  const links = [link(lastPage, 'last')];
  if (page < lastPage) links.unshift(link(page + 1, 'next'));
  return links.join(', ');
}

function banUntil(duration: string | undefined): Date | null | undefined {
  try {
    return banEnds(duration);
  } catch (error) {
    throw errors.validation((error as Error).message);
  }
}

/** An e-mail address from a request body, or GoTrue's 400 for one it cannot use. */
function validEmail(raw: string): string {
  const parsed = emailSchema.safeParse(raw);
  if (!parsed.success) throw errors.validation('Unable to validate email address: invalid format');
  return parsed.data;
}

export function identityRoutes(deps: IdentityRouteDeps): Hono<Env> {
  const app = new Hono<Env>();
  const { service } = deps;

  app.onError((error, c) => renderAuthError(authFailure(error, deps.logger, c.req.path)));
  // Before every route: HEAD is answered 405 on served paths (the table is learned at the end).
  const served = new ServedMethods(IDENTITY_BASE_PATH);
  app.use('*', refuseHead(served));
  // The security audit log's lines name the request's address and user agent (identity/audit.ts).
  app.use('*', (c, next) => auditRequest.run(requestContext(c, deps.trustProxy), next));

  // Public discovery document: no apikey, like the Supabase gateway. Only public members of the
  // ES256/RS256 keys are listed; HS256 keys are secrets and never appear.
  app.get('/.well-known/jwks.json', (c) =>
    c.json(deps.signer.jwks, 200, { 'cache-control': 'public, max-age=600' }),
  );
  // OpenID discovery as GoTrue serves it without its OAuth server: the issuer its tokens carry and
  // where their public keys are, for relying parties that find a key set from the issuer alone.
  app.get('/.well-known/openid-configuration', (c) =>
    c.json(
      {
        issuer: deps.signer.issuer,
        jwks_uri: `${deps.signer.issuer.replace(/\/+$/, '')}/.well-known/jwks.json`,
      },
      200,
      { 'cache-control': 'public, max-age=600' },
    ),
  );

  // E-mail links carry no apikey: the Supabase gateway lets /verify through without one.
  app.get('/verify', async (c) => {
    const type = c.req.query('type') ?? '';
    const token = c.req.query('token') ?? '';
    if (!type) throw errors.validation('Verify requires a verification type');
    if (!token) throw errors.validation('Verify requires a token or a token hash');
    const location = await service.verifyLink(
      { type, token, ...redirectInput(c) },
      requestContext(c, deps.trustProxy),
    );
    return c.redirect(location, 303);
  });

  // The browser comes here without an apikey (a link or button starts it), as with the gateway.
  app.get('/authorize', async (c) => {
    const location = await service.oauthAuthorize(oauthAuthorizeInput(c, deps.trustProxy, null));
    return c.redirect(location, 302);
  });

  app.get('/callback', async (c) => {
    const linkBinding = getCookie(c, LINK_BINDING_COOKIE) ?? null;
    const location = await service.oauthCallback(
      new URL(c.req.url),
      requestContext(c, deps.trustProxy),
      (err) => deps.logger.warn({ err }, 'sign-in with a provider failed'),
      linkBinding,
    );
    // The binding served its one callback.
    if (linkBinding) {
      const { path, secure } = linkBindingCookieOptions(service.deps.email.authUrl);
      deleteCookie(c, LINK_BINDING_COOKIE, { path, secure });
    }
    return c.redirect(location, 302);
  });

  app.post('/verify', async (c) => {
    const input = verifyInput(await readJsonBody(c.req.raw));
    return c.json(await service.verifyPost(input, requestContext(c, deps.trustProxy)));
  });

  // The server's listener serves POST /token on node:http (token-endpoint.ts); this route is
  // the same handler for in-process requests, ahead of the caller middleware below because the
  // handler resolves its caller itself.
  app.post('/token', async (c) =>
    toResponse(await deps.tokenHandler(apiInputOf(c.req.raw, c.env?.incoming))),
  );

  // The OAuth 2.1 server's authorize, token and discovery endpoints (oauth-server/routes.ts): a
  // browser or an OAuth client calls them without an apikey. Absent (404) while the server is off.
  if (service.deps.oauthServer.enabled) oauthServerClientRoutes(app, service, deps.trustProxy);

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
      external: {
        email: true,
        phone: service.deps.phone.sender !== null,
        anonymous_users: deps.anonymousSignIns,
        ...Object.fromEntries(
          KNOWN_PROVIDERS.map((name) => [name, service.oauthProviders().some((p) => p.name === name)]),
        ),
      },
      disable_signup: deps.disableSignup,
      mailer_autoconfirm: deps.autoconfirm,
      phone_autoconfirm: service.deps.phone.autoconfirm,
      sms_provider: service.deps.phone.sender?.name ?? '',
      saml_enabled: false,
      saml_private_key_next_configured: false,
      passkeys_enabled: service.deps.passkeys.enabled,
    }),
  );

  // Single sign-on with SAML 2.0 is not offered: GoTrue's answer when it is disabled, before the
  // request is read, so signInWithSSO reports it.
  app.all('/sso', () => {
    throw authError(404, 'saml_provider_disabled', 'SAML 2.0 is disabled');
  });
  app.all('/sso/saml/*', () => {
    throw authError(404, 'saml_provider_disabled', 'SAML 2.0 is disabled');
  });

  app.post('/signup', async (c) => {
    const body = await readJsonBody(c.req.raw);
    const target = parseWith(signUpTarget, body);
    if (!target.email && !target.phone) {
      const input = parseWith(anonymousSignUpBody, body);
      return c.json(
        await service.signUpAnonymously({ data: input.data ?? {} }, requestContext(c, deps.trustProxy)),
      );
    }
    if (!target.email) {
      if (!service.deps.phone.sender) throw phoneErrors.signupsDisabled();
      const input = parseWith(phoneSignUpBody, body);
      return c.json(
        await service.signUpWithPhone(
          {
            phone: normalizePhone(input.phone),
            password: input.password,
            data: input.data ?? {},
            channel: readChannel(service.deps.phone, input.channel),
          },
          requestContext(c, deps.trustProxy),
        ),
      );
    }
    const input = parseWith(signUpBody, body);
    const pkce = parsePkceParams(input.code_challenge, input.code_challenge_method);
    return c.json(
      await service.signUp(
        {
          email: input.email,
          password: input.password,
          ...(input.data ? { data: input.data } : {}),
          pkce,
          ...redirectInput(c),
        },
        requestContext(c, deps.trustProxy),
      ),
    );
  });

  app.post('/resend', async (c) => {
    const input = parseWith(resendBody, await readJsonBody(c.req.raw));
    const type = RESEND_TYPES.find((t) => t === input.type);
    if (!type) throw errors.validation('Missing one of these types: signup, email_change, sms, phone_change');
    const pkce =
      type === 'signup' || type === 'email_change'
        ? parsePkceParams(input.code_challenge, input.code_challenge_method)
        : null;
    if ((type === 'sms' || type === 'phone_change') && input.phone && !input.email) {
      if (!service.deps.phone.sender) throw phoneErrors.loginsDisabled();
      return c.json(
        await service.resendPhoneCode(
          { type, phone: normalizePhone(input.phone) },
          requestContext(c, deps.trustProxy),
        ),
      );
    }
    const email = input.email ? validEmail(input.email) : undefined;
    return c.json(
      await service.resend({ type, email, phone: input.phone ?? undefined, pkce, ...redirectInput(c) }),
    );
  });

  app.post('/recover', async (c) => {
    const input = parseWith(recoverBody, await readJsonBody(c.req.raw));
    if (!input.email) throw errors.validation('Password recovery requires an email');
    const email = validEmail(input.email);
    const pkce = parsePkceParams(input.code_challenge, input.code_challenge_method);
    return c.json(await service.recover({ email, pkce, ...redirectInput(c) }));
  });

  app.post('/otp', async (c) => {
    const input = parseWith(otpBody, await readJsonBody(c.req.raw));
    if (input.email && input.phone) {
      throw errors.validation('Only an email address or phone number should be provided');
    }
    if (input.email && input.channel) {
      throw errors.validation('Channel should only be specified with Phone OTP');
    }
    const pkce = parsePkceParams(input.code_challenge, input.code_challenge_method);
    if (input.phone) {
      // GoTrue's SmsOtp: off without a provider, then the number and the channel checked.
      if (!service.deps.phone.sender)
        throw authError(400, 'phone_provider_disabled', 'Unsupported phone provider');
      const phone = normalizePhone(input.phone);
      return c.json(
        await service.signInWithPhoneOtp(
          {
            phone,
            createUser: input.create_user ?? true,
            data: input.data ?? {},
            channel: readChannel(service.deps.phone, input.channel),
          },
          requestContext(c, deps.trustProxy),
        ),
      );
    }
    if (!input.email) throw errors.validation('One of email or phone must be set');
    return c.json(
      await service.signInWithOtp(
        {
          email: validEmail(input.email),
          createUser: input.create_user ?? true,
          data: input.data ?? {},
          pkce,
          ...redirectInput(c),
        },
        requestContext(c, deps.trustProxy),
      ),
    );
  });

  // GoTrue's older entry for e-mail links (what gotrue-js v1's signIn({ email }) called): an /otp
  // request by e-mail that always signs an unknown address up, under the same e-mail limits.
  app.post('/magiclink', async (c) => {
    const input = parseWith(magicLinkBody, await readJsonBody(c.req.raw));
    if (!input.email) throw authError(422, 'validation_failed', 'Password recovery requires an email');
    const email = validEmail(input.email);
    const pkce = parsePkceParams(input.code_challenge, input.code_challenge_method);
    return c.json(
      await service.signInWithOtp(
        { email, createUser: true, data: input.data ?? {}, pkce, ...redirectInput(c) },
        requestContext(c, deps.trustProxy),
      ),
    );
  });

  app.get('/user', async (c) => c.json(await service.currentUser(requireUser(c.get('caller')))));

  app.put('/user', async (c) => {
    const claims = requireUser(c.get('caller'));
    await requireOwnSession(service.deps.pool, claims);
    const input = parseWith(updateUserBody, await readJsonBody(c.req.raw));
    if (input.app_metadata !== undefined) throw errors.appMetadataNotAllowed();
    const pkce = parsePkceParams(input.code_challenge, input.code_challenge_method);
    return c.json(
      await service.updateCurrentUser(claims, {
        ...(input.email !== undefined ? { email: input.email } : {}),
        ...(input.password !== undefined ? { password: input.password } : {}),
        ...(input.data !== undefined ? { data: input.data } : {}),
        // GoTrue ignores an empty phone; any other is read as /otp reads it.
        ...(input.phone ? { phone: normalizePhone(input.phone) } : {}),
        ...(input.channel ? { channel: readChannel(service.deps.phone, input.channel) } : {}),
        currentPassword: input.current_password,
        address: requestContext(c, deps.trustProxy).ip,
        nonce: input.nonce,
        pkce,
        ...redirectInput(c),
      }),
    );
  });

  app.get('/user/identities', async (c) =>
    c.json({ identities: await service.listIdentities(requireUser(c.get('caller'))) }),
  );

  app.get('/user/identities/authorize', async (c) => {
    const claims = requireUser(c.get('caller'));
    await requireOwnSession(service.deps.pool, claims);
    const input = oauthAuthorizeInput(c, deps.trustProxy, claims.sub);
    // Without PKCE the link is bound to this browser by a secret cookie the callback checks.
    const linkBinding = input.pkce ? null : newLinkBinding();
    const location = await service.oauthAuthorize({ ...input, linkBinding });
    if (linkBinding) {
      setCookie(c, LINK_BINDING_COOKIE, linkBinding, linkBindingCookieOptions(service.deps.email.authUrl));
    }
    if (c.req.query('skip_http_redirect') === 'true') return c.json({ url: location });
    return c.redirect(location, 302);
  });

  app.delete('/user/identities/:id', async (c) => {
    const claims = requireUser(c.get('caller'));
    await requireOwnSession(service.deps.pool, claims);
    await service.unlinkIdentity(claims, c.req.param('id'));
    return c.json({});
  });

  app.get('/reauthenticate', async (c) => {
    const claims = requireUser(c.get('caller'));
    await requireOwnSession(service.deps.pool, claims);
    return c.json(await service.reauthenticate(claims));
  });

  app.post('/logout', async (c) => {
    const scope = c.req.query('scope') ?? 'global';
    if (scope !== 'global' && scope !== 'local' && scope !== 'others') {
      throw errors.validation('Unsupported logout scope: use global, local or others');
    }
    const claims = requireUser(c.get('caller'));
    // A client signs out of its own session only, never the user's others.
    if (scope !== 'local') await requireOwnSession(service.deps.pool, claims);
    await service.signOut(claims, scope);
    return c.body(null, 204);
  });

  // TOTP factors (flows/mfa.ts).
  app.post('/factors', async (c) => {
    const claims = requireNamedUser(c.get('caller'));
    await requireOwnSession(service.deps.pool, claims);
    const input = parseWith(enrollFactorBody, (await readJsonBody(c.req.raw)) ?? {});
    return c.json(
      await service.enrollFactor(claims, {
        factorType: input.factor_type ?? '',
        friendlyName: input.friendly_name ?? undefined,
        issuer: input.issuer ?? undefined,
        phone: input.phone ?? undefined,
      }),
    );
  });

  app.post('/factors/:factorId/challenge', async (c) => {
    const claims = requireNamedUser(c.get('caller'));
    await requireOwnSession(service.deps.pool, claims);
    const id = factorIdParam(c.req.param('factorId'));
    const input = parseWith(challengeFactorBody, await readJsonBody(c.req.raw));
    return c.json(
      await service.challengeFactor(
        claims,
        id,
        requestContext(c, deps.trustProxy).ip,
        input?.channel ?? null,
      ),
    );
  });

  app.post('/factors/:factorId/verify', async (c) => {
    const claims = requireNamedUser(c.get('caller'));
    await requireOwnSession(service.deps.pool, claims);
    const id = factorIdParam(c.req.param('factorId'));
    const input = parseWith(verifyFactorBody, (await readJsonBody(c.req.raw)) ?? {});
    return c.json(
      await service.verifyFactor(claims, id, {
        challengeId: input.challenge_id,
        code: input.code ?? '',
        ip: requestContext(c, deps.trustProxy).ip,
        webauthn: input.webauthn
          ? { type: input.webauthn.type, credentialResponse: input.webauthn.credential_response }
          : undefined,
      }),
    );
  });

  app.delete('/factors/:factorId', async (c) => {
    const claims = requireNamedUser(c.get('caller'));
    await requireOwnSession(service.deps.pool, claims);
    const id = factorIdParam(c.req.param('factorId'));
    return c.json(await service.unenrollFactor(claims, id));
  });

  app.get('/admin/users/:id/factors', async (c) => {
    requireAdmin(c.get('caller'));
    return c.json(await service.adminListFactors(parseWith(uuid, c.req.param('id'))));
  });

  app.delete('/admin/users/:id/factors/:factorId', async (c) => {
    requireAdmin(c.get('caller'));
    const userId = parseWith(uuid, c.req.param('id'));
    return c.json(await service.adminDeleteFactor(userId, factorIdParam(c.req.param('factorId'))));
  });

  // Passkeys (flows/passkeys.ts): the sign-in ceremony needs no session, the rest do.
  app.post('/passkeys/authentication/options', async (c) =>
    c.json(await service.passkeyAuthenticationStart(requestContext(c, deps.trustProxy))),
  );
  app.post('/passkeys/authentication/verify', async (c) => {
    const input = passkeyCeremony(await readJsonBody(c.req.raw), service.deps.passkeys.enabled);
    return c.json(await service.passkeyAuthenticationFinish(input, requestContext(c, deps.trustProxy)));
  });
  app.post('/passkeys/registration/options', async (c) => {
    const claims = passkeyCaller(c.get('caller'), service.deps.passkeys.enabled, true);
    await requireOwnSession(service.deps.pool, claims);
    return c.json(await service.passkeyRegistrationStart(claims));
  });
  app.post('/passkeys/registration/verify', async (c) => {
    const claims = passkeyCaller(c.get('caller'), service.deps.passkeys.enabled, true);
    await requireOwnSession(service.deps.pool, claims);
    const input = passkeyCeremony(await readJsonBody(c.req.raw), true);
    return c.json(await service.passkeyRegistrationFinish(claims, input));
  });
  app.get('/passkeys', async (c) => {
    const claims = passkeyCaller(c.get('caller'), service.deps.passkeys.enabled, false);
    return c.json(await service.listPasskeys(claims));
  });
  app.patch('/passkeys/:passkeyId', async (c) => {
    const claims = passkeyCaller(c.get('caller'), service.deps.passkeys.enabled, false);
    await requireOwnSession(service.deps.pool, claims);
    const id = passkeyIdParam(c.req.param('passkeyId'));
    const input = parseWith(passkeyUpdateBody, (await readJsonBody(c.req.raw)) ?? {});
    return c.json(await service.renamePasskey(claims, id, input.friendly_name ?? ''));
  });
  app.delete('/passkeys/:passkeyId', async (c) => {
    const claims = passkeyCaller(c.get('caller'), service.deps.passkeys.enabled, false);
    await requireOwnSession(service.deps.pool, claims);
    await service.deletePasskey(claims, passkeyIdParam(c.req.param('passkeyId')));
    return c.body(null, 204);
  });
  app.get('/admin/users/:id/passkeys', async (c) => {
    requireAdmin(c.get('caller'));
    return c.json(await service.adminListPasskeys(parseWith(uuid, c.req.param('id'))));
  });
  app.delete('/admin/users/:id/passkeys/:passkeyId', async (c) => {
    requireAdmin(c.get('caller'));
    const userId = parseWith(uuid, c.req.param('id'));
    await service.adminDeletePasskey(userId, passkeyIdParam(c.req.param('passkeyId')));
    return c.body(null, 204);
  });

  app.post('/invite', async (c) => {
    requireAdmin(c.get('caller'));
    const input = parseWith(inviteBody, await readJsonBody(c.req.raw));
    const user = await service.inviteUser({
      email: input.email,
      ...(input.data ? { data: input.data } : {}),
      ...redirectInput(c),
    });
    return c.json(renderUser(user));
  });

  app.post('/admin/generate_link', async (c) => {
    requireAdmin(c.get('caller'));
    const input = parseWith(generateLinkBody, await readJsonBody(c.req.raw));
    const type = GENERATE_LINK_TYPES.find((t) => t === input.type);
    if (!type) throw errors.validation(`Invalid email action link type requested: ${input.type ?? ''}`);
    const newEmail =
      type === 'email_change_current' || type === 'email_change_new'
        ? validEmail(input.new_email ?? '')
        : null;
    return c.json(
      await service.adminGenerateLink({
        type,
        email: input.email,
        newEmail,
        password: input.password ?? null,
        data: input.data ?? null,
        bodyRedirectTo: input.redirect_to ?? null,
        ...redirectInput(c),
      }),
    );
  });

  app.get('/admin/users', async (c) => {
    requireAdmin(c.get('caller'));
    const page = pagingParameter('page', c.req.query('page'), 1);
    const perPage = Math.min(pagingParameter('per_page', c.req.query('per_page'), 50), MAX_PER_PAGE);
    const { users, total } = await service.adminListUsers(page, perPage);
    return c.json({ users: users.map(renderUser), aud: 'authenticated' }, 200, {
      'x-total-count': String(total),
      link: pageLinks(c.req.url, page, perPage, total),
    });
  });

  app.post('/admin/users', async (c) => {
    requireAdmin(c.get('caller'));
    const input = parseWith(adminCreateBody, await readJsonBody(c.req.raw));
    const bannedUntil = banUntil(input.ban_duration);
    const user = await service.adminCreateUser({
      email: input.email,
      ...(input.id !== undefined ? { id: input.id } : {}),
      ...(input.password !== undefined ? { password: input.password } : {}),
      ...(input.password_hash !== undefined ? { passwordHash: input.password_hash } : {}),
      ...(bannedUntil ? { bannedUntil } : {}),
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
    const soft = parseWith(adminDeleteBody, await readJsonBody(c.req.raw));
    await service.adminDeleteUser(id, soft);
    return c.json({});
  });

  // The OAuth 2.1 server's client administration (oauth-server/clients.ts), only when it is on:
  // otherwise these paths answer 404 like any other path not served.
  if (service.deps.oauthServer.enabled) {
    const { pool, oauthServer } = service.deps;
    app.get('/admin/oauth/clients', async (c) => {
      requireAdmin(c.get('caller'));
      const page = pagingParameter('page', c.req.query('page'), 1);
      const perPage = Math.min(pagingParameter('per_page', c.req.query('per_page'), 50), MAX_PER_PAGE);
      const { clients, total } = await oauthClients.listClients(pool, page, perPage);
      return c.json({ clients, aud: 'authenticated' }, 200, {
        'x-total-count': String(total),
        link: pageLinks(c.req.url, page, perPage, total),
      });
    });
    app.post('/admin/oauth/clients', async (c) => {
      requireAdmin(c.get('caller'));
      const input = parseWith(oauthClients.createClientBody, await readJsonBody(c.req.raw));
      return c.json(await oauthClients.createClient(pool, oauthServer, input), 201);
    });
    app.get('/admin/oauth/clients/:clientId', async (c) => {
      requireAdmin(c.get('caller'));
      return c.json(await oauthClients.getClient(pool, oauthClients.clientIdParam(c.req.param('clientId'))));
    });
    app.put('/admin/oauth/clients/:clientId', async (c) => {
      requireAdmin(c.get('caller'));
      const id = oauthClients.clientIdParam(c.req.param('clientId'));
      const input = parseWith(oauthClients.updateClientBody, await readJsonBody(c.req.raw));
      return c.json(await oauthClients.updateClient(pool, oauthServer, id, input));
    });
    app.delete('/admin/oauth/clients/:clientId', async (c) => {
      requireAdmin(c.get('caller'));
      await oauthClients.deleteClient(pool, oauthClients.clientIdParam(c.req.param('clientId')));
      return c.body(null, 204);
    });
    app.post('/admin/oauth/clients/:clientId/regenerate_secret', async (c) => {
      requireAdmin(c.get('caller'));
      const id = oauthClients.clientIdParam(c.req.param('clientId'));
      return c.json(await oauthClients.regenerateSecret(pool, id));
    });
    // the signed-in user's side: the consent page's calls and their grants
    oauthServerUserRoutes(app, service);
  }

  // What no route above serves: 405 for another method on a served path, else 404.
  served.learn(app.routes);
  app.all(
    '*',
    answerUnserved(served, () => renderAuthError(new HttpError(404, 'Not found', { code: 'not_found' }))),
  );
  return app;
}
