// In charge of what every identity flow shares: its dependencies and settings, the token response
// that ends every sign-in, the password policy, and the live-user check behind /user endpoints.
import type { IncomingMessage } from 'node:http';
import type { Pool, Queryable } from '../../db/pool.js';
import { clientAddress } from '../../http/client-address.js';
import type { HeaderReader } from '../../http/headers.js';
import type { OAuthServerConfig, RateLimits } from '../../config.js';
import { signAccessToken, type AccessTokenClaims, type TokenSigner } from '../access-tokens.js';
import type { EmailActionSettings } from '../email-actions.js';
import type { MfaSettings } from './mfa.js';
import type { PasskeySettings } from './passkeys.js';
import type { PhoneSettings } from '../sms/phone-codes.js';
import { errors } from '../errors.js';
import type { OAuthProvider } from '../oauth/providers.js';
import type { IdTokenDeps } from './id-token.js';
import type { PasswordHasher } from '../passwords.js';
import type { RedirectPolicy } from '../redirects.js';
import type { RefreshTokenKey } from '../refresh-tokens.js';
import { sessionExists, type SessionContext, type SessionRef } from '../sessions.js';
import { findUserById, isBanned, renderUser, type UserWithIdentities } from '../users.js';

export interface IdentitySettings {
  autoconfirm: boolean;
  disableSignup: boolean;
  /** POST /signup without e-mail or phone signs in anonymously (ENABLE_ANONYMOUS_SIGN_INS) */
  anonymousSignIns: boolean;
  minPasswordLength: number;
  refreshTokenTtlSeconds: number;
  refreshTokenReuseIntervalSeconds: number;
  rateLimits: RateLimits;
  /** wrong tries one e-mail code survives (MAILER_OTP_ATTEMPTS) */
  otpMaxAttempts: number;
  /** an e-mail change is confirmed from the current address too (SECURE_EMAIL_CHANGE) */
  secureEmailChange: boolean;
  /** a password change needs a recent sign-in or a reauthentication code (SECURE_PASSWORD_CHANGE) */
  securePasswordChange: boolean;
  /** a password change names the current password, except in a recent recovery session */
  requireCurrentPassword: boolean;
  /** seconds a recovery session may set a password without the current one (RECOVERY_SESSION_WINDOW) */
  recoverySessionSeconds: number;
}

export interface IdentityDeps {
  pool: Pool;
  signer: TokenSigner;
  refreshKey: RefreshTokenKey;
  settings: IdentitySettings;
  /** what redirect_to may name (SITE_URL, APP_URL, URI_ALLOW_LIST) */
  redirects: RedirectPolicy;
  /** tokens, links and e-mails of the e-mail actions */
  email: EmailActionSettings;
  /** sign-in with OAuth/OIDC providers: the enabled ones (EXTERNAL_*) */
  oauth: { providers: OAuthProvider[]; manualLinking: boolean; idToken: IdTokenDeps };
  /** the OAuth 2.1 authorization server: on or off, and its clients' limits */
  oauthServer: OAuthServerConfig;
  /** TOTP factors: the sealing key, limits and expiries */
  mfa: MfaSettings;
  /** passkeys: the relying party, the switch and limits */
  passkeys: PasskeySettings;
  /** phone sign-in and phone factors: the SMS provider (null when off), codes and limits */
  phone: PhoneSettings;
  /** every password hash and verify, through the process's one fair queue */
  passwords: PasswordHasher;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  expires_at: number;
  refresh_token: string;
  user: Record<string, unknown>;
}

/**
 * A flow that may sign the person in (a sign-up, a verified code) answers a session, or else
 * something that is not one: the user awaiting confirmation, or a message.
 */
export function isTokenResponse(answer: TokenResponse | Record<string, unknown>): answer is TokenResponse {
  return typeof answer.access_token === 'string';
}

export interface RequestContext extends SessionContext {
  /** the client address used for per-address limits */
  ip: string | null;
}

/** The caller's address (forwarded only behind TRUST_PROXY) and user agent, as sessions keep them. */
export function requestContextOf(
  headers: HeaderReader,
  incoming: IncomingMessage | undefined,
  trustProxy: boolean,
): RequestContext {
  return {
    ip: clientAddress(headers, incoming, trustProxy),
    userAgent: headers.get('user-agent')?.slice(0, 512) ?? null,
  };
}

/** The GoTrue token response for a freshly opened or rotated session. */
export async function tokenResponse(
  deps: IdentityDeps,
  user: UserWithIdentities,
  session: SessionRef,
): Promise<TokenResponse> {
  const { token, expiresAt } = await signAccessToken(deps.signer, {
    userId: user.id,
    aud: user.aud,
    role: user.role,
    email: user.email ?? '',
    phone: user.phone ?? '',
    appMetadata: user.raw_app_meta_data,
    userMetadata: user.raw_user_meta_data,
    isAnonymous: user.is_anonymous,
    sessionId: session.sessionId,
    aal: session.aal,
    amr: session.amr,
    // a session an OAuth client holds keeps naming it, whichever endpoint refreshed it
    clientId: session.oauthClientId ?? undefined,
  });
  return {
    access_token: token,
    token_type: 'bearer',
    expires_in: deps.signer.ttlSeconds,
    expires_at: expiresAt,
    refresh_token: session.refreshToken,
    user: renderUser(user),
  };
}

export function checkPasswordStrength(settings: IdentitySettings, password: string): void {
  if ([...password].length < settings.minPasswordLength) {
    throw errors.weakPassword(settings.minPasswordLength);
  }
}

/** The user behind an access token, provided the session it names still exists. */
export async function requireLiveUser(tx: Queryable, claims: AccessTokenClaims): Promise<UserWithIdentities> {
  const user = await findUserById(tx, claims.sub);
  if (!user) throw errors.userNotFoundForToken();
  if (!(await sessionExists(tx, claims.session_id, claims.sub))) throw errors.sessionNotFound();
  if (isBanned(user)) throw errors.bannedCaller();
  return user;
}
