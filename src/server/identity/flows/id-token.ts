// In charge of POST /token?grant_type=id_token, GoTrue's native and one-tap sign-in: a client that
// signed the person in with Google, Apple, Microsoft, Facebook, Keycloak, Kakao or an allowed
// issuer's own SDK brings the ID token; it is checked (oauth/id-token-verify.ts), its audience must
// be one of the provider's client ids, its nonce the SHA-256 of the one the client sends, and the
// person becomes an account as a provider sign-in decides it (oauth/accounts.ts), or an identity
// of the signed-in user with link_identity. Refusals use GoTrue's words.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { JWTPayload } from 'jose';
import { withService } from '../../db/transactions.js';
import type { Caller } from '../caller.js';
import { authError, errors } from '../errors.js';
import { accountForProviderUser } from '../oauth/accounts.js';
import { AZURE_ISSUER, type IdTokenProvider, type IdTokenSettings } from '../oauth/id-token-providers.js';
import type { ProviderUser } from '../oauth/protocol.js';
import {
  IdTokenRejected,
  unverifiedIssuer,
  verifyIdToken,
  type KeySettings,
} from '../oauth/id-token-verify.js';
import { oauthErrors } from './oauth.js';
import { enforceLimits } from '../rate-limit.js';
import { openSession } from '../sessions.js';
import { tokenResponse, type IdentityDeps, type RequestContext, type TokenResponse } from './context.js';

export interface IdTokenGrantInput {
  provider: string;
  idToken: string;
  accessToken: string;
  nonce: string;
  clientId: string;
  issuer: string;
  linkIdentity: boolean;
}

export type IdTokenDeps = IdTokenSettings & KeySettings;

// GoTrue answers these as OAuth errors (400, no error code of its own); here they carry
// validation_failed so every identity error has one, with GoTrue's descriptions word for word.
export const idTokenErrors = {
  required: () => errors.validation('id_token required'),
  providerOrIssuer: () => errors.validation('provider or client_id and issuer required'),
  linkNeedsUser: () => errors.validation('Linking requires a valid user access token in Authorization'),
  notAllowed: (provider: string) => errors.validation(`Custom OIDC provider "${provider}" not allowed`),
  disabled: (issuer: string) =>
    authError(400, 'provider_disabled', `Provider (issuer "${issuer}") is not enabled`),
  azureIssuer: () => errors.validation('Unable to detect issuer in ID token for Azure provider'),
  appleIssuer: () => errors.validation('Detected ID token issuer is not an Apple ID token issuer'),
  issuerMismatch: () => errors.validation('Provided issuer does not match ID token issuer'),
  badToken: () => errors.validation('Bad ID token'),
  noSubject: () => errors.validation('Missing sub claim in id_token'),
  audience: (aud: string[]) => errors.validation(`Unacceptable audience in id_token: [${aud.join(' ')}]`),
  nonceBoth: () => errors.validation('Passed nonce and nonce in id_token should either both exist or not.'),
  nonceMismatch: () => errors.validation('Nonces mismatch'),
};

interface Chosen {
  /** the identities' provider: the provider's name, or a custom issuer's URL (as GoTrue stores it) */
  name: string;
  label: string;
  issuers: string[];
  jwksUrl: string | null;
  clientIds: string[];
  skipNonceCheck: boolean;
}

function enabled(provider: IdTokenProvider, issuer: string): IdTokenProvider {
  if (!provider.enabled) throw idTokenErrors.disabled(issuer);
  return provider;
}

/** GoTrue's getProvider: by name, or by a well-known issuer; else an explicitly allowed issuer. */
function chooseProvider(settings: IdTokenSettings, input: IdTokenGrantInput): Chosen {
  const named = (name: string) => settings.providers.find((p) => p.name === name)!;
  const fromList = (p: IdTokenProvider, issuers: string[]): Chosen => ({
    name: p.name,
    label: p.label,
    issuers,
    jwksUrl: p.jwksUrl,
    clientIds: p.clientIds,
    skipNonceCheck: p.skipNonceCheck,
  });
  for (const name of ['apple', 'google']) {
    const p = named(name);
    if (input.provider !== name && !p.issuers.includes(input.issuer)) continue;
    if (name === 'apple') {
      // Apple has two issuer names: the token says which; a stated issuer must agree with it.
      const detected = unverifiedIssuer(input.idToken);
      if (!detected || !p.issuers.includes(detected)) throw idTokenErrors.appleIssuer();
      if (input.issuer && input.issuer !== detected) throw idTokenErrors.issuerMismatch();
      return fromList(enabled(p, detected), [detected]);
    }
    return fromList(enabled(p, p.issuers[0]!), p.issuers);
  }
  if (input.provider === 'azure' || AZURE_ISSUER.test(input.issuer)) {
    // Each Microsoft tenant is its own issuer: the token's, if it is a Microsoft one.
    const detected = unverifiedIssuer(input.idToken);
    if (!detected || !AZURE_ISSUER.test(detected)) throw idTokenErrors.azureIssuer();
    if (input.issuer && input.issuer !== detected) throw idTokenErrors.issuerMismatch();
    return fromList(enabled(named('azure'), detected), [detected]);
  }
  for (const name of ['facebook', 'keycloak', 'kakao', 'oidc']) {
    const p = named(name);
    // Keycloak and the operator's issuer are known by their issuer only when they are enabled.
    const configured = p.enabled || (name !== 'keycloak' && name !== 'oidc');
    const byIssuer = configured && p.issuers.includes(input.issuer);
    if (input.provider !== name && !byIssuer) continue;
    if (!p.enabled) throw idTokenErrors.disabled(p.issuers[0] ?? '');
    return fromList(p, p.issuers);
  }
  // Any other issuer only if the operator listed it; its audience is the client id sent.
  if (input.issuer && settings.allowedIssuers.includes(input.issuer)) {
    return {
      name: input.issuer,
      label: input.issuer,
      issuers: [input.issuer],
      jwksUrl: null,
      clientIds: [input.clientId],
      skipNonceCheck: false,
    };
  }
  throw idTokenErrors.notAllowed(input.provider);
}

function emailVerifiedClaim(value: unknown): boolean {
  return value === true || value === 'true';
}

/** Who the token names, with each issuer's rule for whether its e-mail is verified (GoTrue's). */
function personFrom(chosen: Chosen, claims: JWTPayload, accessToken: string): ProviderUser {
  const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
  const email = text(claims.email);
  let verified: boolean;
  switch (chosen.name) {
    case 'apple':
    case 'kakao':
    case 'facebook':
      // Apple relays only addresses it checked; Kakao and Facebook Limited Login the same.
      verified = email !== undefined;
      break;
    case 'azure': {
      // Microsoft: xms_edov says whether the tenant owns the domain; without it the address is taken.
      const edov = claims.xms_edov;
      verified =
        email !== undefined &&
        (edov === undefined || edov === null || edov === true || edov === '1' || edov === 'true');
      break;
    }
    default:
      verified = email !== undefined && emailVerifiedClaim(claims.email_verified);
  }
  const name = text(claims.name) ?? text(claims.nickname);
  const picture = text(claims.picture);
  const data: Record<string, unknown> = {
    iss: claims.iss,
    sub: claims.sub,
    email,
    email_verified: verified,
    phone_verified: false,
    name,
    full_name: name,
    picture,
    avatar_url: picture,
    preferred_username: text(claims.preferred_username) ?? (chosen.name === 'kakao' ? name : undefined),
    provider_id: claims.sub,
    ...(chosen.name === 'google' && text(claims.hd) ? { custom_claims: { hd: claims.hd } } : {}),
  };
  return {
    subject: claims.sub!,
    email: email?.toLowerCase() ?? null,
    emailVerified: verified,
    identityData: Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined)),
    accessToken,
    refreshToken: null,
  };
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** GoTrue's nonce rule: both or neither, and the token's is the SHA-256 hex of the client's. */
function checkNonce(chosen: Chosen, claims: JWTPayload, nonce: string): void {
  if (chosen.skipNonceCheck) return;
  const inToken = typeof claims.nonce === 'string' ? claims.nonce : '';
  if (Boolean(inToken) !== Boolean(nonce)) throw idTokenErrors.nonceBoth();
  if (inToken && !sameText(createHash('sha256').update(nonce).digest('hex'), inToken)) {
    throw idTokenErrors.nonceMismatch();
  }
}

export async function idTokenGrant(
  deps: IdentityDeps,
  settings: IdTokenDeps,
  input: IdTokenGrantInput,
  caller: Caller,
  context: RequestContext,
  onRejected: (reason: IdTokenRejected) => void,
): Promise<TokenResponse> {
  if (!input.idToken) throw idTokenErrors.required();
  if (!input.provider && (!input.clientId || !input.issuer)) throw idTokenErrors.providerOrIssuer();
  let linkingUserId: string | null = null;
  if (input.linkIdentity) {
    if (caller.kind !== 'user') throw idTokenErrors.linkNeedsUser();
    if (!deps.oauth.manualLinking) throw oauthErrors.manualLinkingDisabled();
    linkingUserId = caller.claims.sub;
  }
  if (context.ip) {
    // Each attempt may fetch an issuer's keys and write an account: counted per address, with the
    // same limit as starting a provider sign-in.
    const limits = deps.settings.rateLimits;
    await enforceLimits(deps.pool, [
      {
        bucket: `id_token:ip:${context.ip}`,
        max: limits.signInPerAddress,
        windowSeconds: limits.windowSeconds,
      },
    ]);
  }
  const chosen = chooseProvider(settings, input);
  let claims: JWTPayload;
  try {
    claims = await verifyIdToken(
      {
        idToken: input.idToken,
        issuers: chosen.issuers,
        jwksUrl: chosen.jwksUrl,
        accessToken: input.accessToken || null,
      },
      settings,
    );
  } catch (error) {
    if (!(error instanceof IdTokenRejected)) throw error;
    onRejected(error); // logged: which check failed is for the operator, not the client
    throw idTokenErrors.badToken();
  }
  if (!claims.sub) throw idTokenErrors.noSubject();
  const audiences = typeof claims.aud === 'string' ? [claims.aud] : (claims.aud ?? []);
  if (!chosen.clientIds.some((id) => id !== '' && audiences.includes(id))) {
    throw idTokenErrors.audience(audiences);
  }
  checkNonce(chosen, claims, input.nonce);
  const person = personFrom(chosen, claims, input.accessToken);
  return withService(deps.pool, async (tx) => {
    const user = await accountForProviderUser(tx, {
      provider: chosen.name,
      label: chosen.label,
      person,
      linkingUserId,
      autoconfirm: deps.settings.autoconfirm,
      disableSignup: deps.settings.disableSignup,
    });
    const session = await openSession(tx, user.id, 'oauth', context);
    return tokenResponse(deps, { ...user, last_sign_in_at: new Date() }, session);
  });
}
