// In charge of sign-in with OAuth/OIDC providers, GoTrue's external flow: GET /authorize (and
// /user/identities/authorize for linking) sends the browser to the provider with a single-use,
// expiring state; GET /callback checks it, has the provider confirm the person, decides the
// account (oauth/accounts.ts) and sends the browser to redirect_to with the session in the
// fragment (implicit flow) or ?code= for the client's PKCE exchange. Every refusal after the
// browser left goes back to redirect_to as error, error_code and error_description. Linking is
// bound to the browser that started it: a PKCE link is written only at the code exchange with
// that browser's verifier, a link without PKCE only when the callback brings back the secret
// cookie set on the authorize answer (oauth/link-binding.ts, docs/decisions/0041).
import { withService } from '../../db/transactions.js';
import { HttpError } from '../../http/errors.js';
import { authError, errors } from '../errors.js';
import { metadataRefusal } from '../metadata-bound.js';
import { accountErrors, accountForProviderUser } from '../oauth/accounts.js';
import { hashLinkBinding, linkBindingMatches } from '../oauth/link-binding.js';
import {
  authorizationUrl,
  completeAuthorization,
  newAuthorizationChecks,
  ProviderError,
} from '../oauth/protocol.js';
import { KNOWN_PROVIDERS, type OAuthProvider } from '../oauth/providers.js';
import { saveState, takeState } from '../oauth/states.js';
import { createFlowState, issueAuthCode, type PkceChallenge } from '../pkce.js';
import { enforceLimits } from '../rate-limit.js';
import { chooseRedirect } from '../redirects.js';
import { openSession } from '../sessions.js';
import { tokenResponse, type IdentityDeps, type RequestContext } from './context.js';

export interface AuthorizeInput {
  provider: string;
  scopes: string;
  redirectTo: string | undefined;
  referer: string | null;
  pkce: PkceChallenge | null;
  /** the caller's other query parameters, passed on to the provider (prompt, login_hint, ...) */
  queryParams: Record<string, string>;
  /** set by /user/identities/authorize: the signed-in user the identity is for */
  linkingUserId: string | null;
  /** a link without PKCE: the secret of the cookie sent to the initiating browser */
  linkBinding?: string | null;
  /** the client address: each start stores a state, so starts count against the sign-in limit */
  ip: string | null;
}

// Parameters only this service decides; a caller's copy of them is dropped, never forwarded.
const RESERVED_PARAMETERS = new Set([
  'provider',
  'scopes',
  'redirect_to',
  'skip_http_redirect',
  'redirect_uri',
  'response_type',
  'response_mode',
  'client_id',
  'scope',
  'state',
  'nonce',
  'code_challenge',
  'code_challenge_method',
  'request',
  'request_uri',
]);

/** The query parameters forwarded to the provider. */
export function forwardedParameters(query: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(query).filter(([key]) => !RESERVED_PARAMETERS.has(key.toLowerCase())),
  );
}

export const oauthErrors = {
  unsupported: (name: string) =>
    authError(400, 'validation_failed', `Unsupported provider: Provider ${name} could not be found`),
  disabled: () => authError(400, 'validation_failed', 'Unsupported provider: provider is not enabled'),
  stateMissing: () => authError(400, 'bad_oauth_callback', 'OAuth state parameter missing'),
  stateUnknown: () => authError(400, 'bad_oauth_state', 'OAuth state not found or expired'),
  stateExpired: () => authError(400, 'bad_oauth_state', 'OAuth state has expired'),
  providerRefused: (message: string) => authError(400, 'bad_oauth_callback', message),
  manualLinkingDisabled: () => authError(404, 'manual_linking_disabled', 'Manual linking is disabled'),
  linkElsewhere: () =>
    authError(
      403,
      'bad_oauth_state',
      'The identity link was started in another browser: start it again from your account',
    ),
};

function findProvider(deps: IdentityDeps, name: string): OAuthProvider {
  const wanted = name.toLowerCase();
  const provider = deps.oauth.providers.find((p) => p.name === wanted);
  if (provider) return provider;
  if (!wanted) throw errors.validation('Unsupported provider: missing provider');
  throw KNOWN_PROVIDERS.includes(wanted) ? oauthErrors.disabled() : oauthErrors.unsupported(wanted);
}

/** The provider's authorization URL for this request; its state is stored for the callback. */
export async function authorize(deps: IdentityDeps, input: AuthorizeInput): Promise<string> {
  if (input.linkingUserId && !deps.oauth.manualLinking) throw oauthErrors.manualLinkingDisabled();
  // A link must be completable only by its initiator: by its PKCE verifier, or by the cookie.
  if (input.linkingUserId && !input.pkce && !input.linkBinding) throw oauthErrors.linkElsewhere();
  const provider = findProvider(deps, input.provider);
  if (input.ip) {
    const limits = deps.settings.rateLimits;
    await enforceLimits(deps.pool, [
      {
        bucket: `authorize:ip:${input.ip}`,
        max: limits.signInPerAddress,
        windowSeconds: limits.windowSeconds,
      },
    ]);
  }
  const redirectTo = chooseRedirect(deps.redirects, input.redirectTo, input.referer);
  const checks = newAuthorizationChecks();
  const scopes = input.scopes.split(/[\s,]+/).filter(Boolean);
  let url: string;
  try {
    url = await authorizationUrl(provider, checks, scopes, forwardedParameters(input.queryParams));
  } catch (error) {
    if (error instanceof ProviderError) throw authError(502, 'provider_unreachable', error.message);
    throw error;
  }
  await saveState(deps.pool, checks.state, {
    provider: provider.name,
    codeVerifier: checks.codeVerifier,
    nonce: checks.nonce,
    redirectTo,
    pkce: input.pkce,
    linkingUserId: input.linkingUserId,
    linkBindingHash:
      input.linkingUserId && !input.pkce && input.linkBinding ? hashLinkBinding(input.linkBinding) : null,
  });
  return url;
}

/** GoTrue's error redirect: the error in the query and, for implicit-flow clients, the fragment. */
export function errorRedirect(target: string, error: HttpError, oauthError?: string): string {
  const url = new URL(target);
  const category =
    oauthError ??
    (['signup_disabled', 'user_banned', 'provider_email_needs_verification'].includes(error.code)
      ? 'access_denied'
      : error.status >= 500
        ? 'server_error'
        : error.status === 401 || error.status === 403
          ? 'access_denied'
          : 'invalid_request');
  const fields = new URLSearchParams({
    error: category,
    error_code: error.code,
    error_description: error.message,
  });
  for (const [key, value] of fields) url.searchParams.set(key, value);
  url.hash = `${fields.toString()}&sb=`;
  return url.toString();
}

/**
 * GET /callback: where the browser goes next. Never throws for a refusal: the refusal is in the
 * returned location (redirect_to when the state was found, else the site URL).
 */
export async function callback(
  deps: IdentityDeps,
  callbackUrl: URL,
  context: RequestContext,
  onUnexpected: (error: unknown) => void,
  /** the link-binding cookie's secret the browser brought back, if any */
  linkBinding: string | null = null,
): Promise<string> {
  let target = deps.redirects.siteUrl;
  try {
    const stateValue = callbackUrl.searchParams.get('state') ?? '';
    if (!stateValue) throw oauthErrors.stateMissing();
    const taken = await takeState(deps.pool, stateValue);
    if (taken.kind === 'unknown') throw oauthErrors.stateUnknown();
    if (taken.kind === 'expired') throw oauthErrors.stateExpired();
    const state = taken.state;
    target = state.redirectTo;
    // A link without PKCE completes only in the browser holding the authorize answer's cookie.
    if (
      state.linkingUserId &&
      !state.pkce &&
      !(state.linkBindingHash && linkBindingMatches(state.linkBindingHash, linkBinding))
    ) {
      throw oauthErrors.linkElsewhere();
    }
    const providerError = callbackUrl.searchParams.get('error');
    if (providerError) {
      const description =
        callbackUrl.searchParams.get('error_description') ?? 'The provider refused the sign-in';
      return errorRedirect(target, oauthErrors.providerRefused(description), providerError.slice(0, 64));
    }
    const provider = findProvider(deps, state.provider);
    let person;
    try {
      person = await completeAuthorization(provider, callbackUrl, {
        state: stateValue,
        nonce: state.nonce,
        codeVerifier: state.codeVerifier,
      });
    } catch (error) {
      if (!(error instanceof ProviderError)) throw error;
      onUnexpected(error); // logged: a failed check is worth knowing about
      throw oauthErrors.providerRefused(error.message);
    }
    if (state.linkingUserId && state.pkce) {
      return await withService(deps.pool, async (tx) => {
        // Refused now if it can never be linked; otherwise linked at the exchange, by the verifier.
        const linked = await tx.query<{ user_id: string }>(
          'select user_id from auth.identities where provider = $1 and provider_id = $2',
          [provider.name, person.subject],
        );
        const holder = linked.rows[0]?.user_id;
        if (holder) {
          throw holder === state.linkingUserId
            ? accountErrors.alreadyLinked()
            : accountErrors.linkedToAnother();
        }
        const flowId = await createFlowState(tx, {
          userId: state.linkingUserId!,
          challenge: state.pkce!,
          authenticationMethod: 'oauth',
          pendingIdentity: {
            provider: provider.name,
            subject: person.subject,
            email: person.email,
            emailVerified: person.emailVerified,
            identityData: person.identityData,
          },
        });
        const url = new URL(target);
        url.searchParams.set('code', (await issueAuthCode(tx, flowId))!);
        return url.toString();
      });
    }
    return await withService(deps.pool, async (tx) => {
      const user = await accountForProviderUser(tx, {
        provider: provider.name,
        label: provider.label,
        person,
        linkingUserId: state.linkingUserId,
        autoconfirm: deps.settings.autoconfirm,
        disableSignup: deps.settings.disableSignup,
      });
      const url = new URL(target);
      if (state.pkce) {
        const flowId = await createFlowState(tx, {
          userId: user.id,
          challenge: state.pkce,
          authenticationMethod: 'oauth',
        });
        const code = (await issueAuthCode(tx, flowId))!;
        url.searchParams.set('code', code);
        return url.toString();
      }
      const session = await openSession(tx, user.id, 'oauth', context);
      const tokens = await tokenResponse(deps, user, session);
      const fragment = new URLSearchParams({
        access_token: tokens.access_token,
        expires_at: String(tokens.expires_at),
        expires_in: String(tokens.expires_in),
        provider_token: person.accessToken,
        refresh_token: tokens.refresh_token,
        token_type: tokens.token_type,
      });
      if (person.refreshToken) fragment.set('provider_refresh_token', person.refreshToken);
      url.hash = fragment.toString();
      return url.toString();
    });
  } catch (error) {
    if (error instanceof HttpError) return errorRedirect(target, error);
    // The provider's profile would make user_metadata larger than METADATA_MAX_BYTES.
    const refusal = metadataRefusal(error);
    if (refusal) return errorRedirect(target, refusal);
    onUnexpected(error);
    return errorRedirect(target, new HttpError(500, 'Unexpected failure', { code: 'unexpected_failure' }));
  }
}
