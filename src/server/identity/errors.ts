// In charge of the identity service's error catalogue: the GoTrue error codes supabase-js
// understands, and the OAuth-style `error`/`error_description` pair the interface spec requires.
import { HttpError, isHttpError } from '../http/errors.js';
import type { Reply } from '../http/reply.js';
import { databaseUnavailable, isDatabaseUnavailable } from '../http/unavailable.js';
import type { Logger } from '../logger.js';
import { metadataRefusal } from './metadata-bound.js';
import { count } from '../text/counts.js';

/** OAuth-style category for the spec's `error` field; GoTrue's own code goes in `error_code`. */
const OAUTH_ERROR: Record<string, string> = {
  invalid_credentials: 'invalid_grant',
  refresh_token_not_found: 'invalid_grant',
  refresh_token_already_used: 'invalid_grant',
  session_not_found: 'invalid_grant',
  session_expired: 'invalid_grant',
  email_not_confirmed: 'invalid_grant',
  user_banned: 'invalid_grant',
  unsupported_grant_type: 'unsupported_grant_type',
  validation_failed: 'invalid_request',
  bad_json: 'invalid_request',
  request_too_large: 'invalid_request',
  bad_jwt: 'invalid_token',
  no_authorization: 'invalid_token',
  invalid_api_key: 'invalid_client',
  not_admin: 'insufficient_scope',
  otp_expired: 'access_denied',
  flow_state_not_found: 'invalid_grant',
  flow_state_expired: 'invalid_grant',
  bad_code_verifier: 'invalid_grant',
};

export function oauthErrorFor(code: string): string {
  return OAUTH_ERROR[code] ?? code;
}

/** GoTrue's error body (the legacy fields auth-js reads, error_code) plus the spec's OAuth pair. */
export function authErrorReply(error: HttpError): Reply {
  const body: Record<string, unknown> = {
    code: error.status,
    error_code: error.code,
    msg: error.message,
    error: oauthErrorFor(error.code),
    error_description: error.message,
  };
  if (error.code === 'weak_password') body.weak_password = { reasons: ['length'] };
  return {
    status: error.status,
    headers: { 'content-type': 'application/json', 'x-sb-error-code': error.code, ...error.headers },
    body: JSON.stringify(body),
  };
}

/** What any failure of an identity request answers: its own error, 503 for the database, else a logged 500. */
export function authFailure(error: unknown, logger: Logger, path: string): HttpError {
  if (isHttpError(error)) return error;
  if (isDatabaseUnavailable(error)) return databaseUnavailable(error);
  // Metadata over METADATA_MAX_BYTES, refused by the database on whichever path wrote it.
  const refusal = metadataRefusal(error);
  if (refusal) return refusal;
  logger.error({ err: error, path }, 'identity request failed');
  return new HttpError(500, 'Internal server error', { code: 'unexpected_failure' });
}

export function authError(status: number, code: string, message: string, headers?: Record<string, string>) {
  return new HttpError(status, message, { code, ...(headers ? { headers } : {}) });
}

export const errors = {
  invalidCredentials: () => authError(400, 'invalid_credentials', 'Invalid login credentials'),
  validation: (message: string) => authError(400, 'validation_failed', message),
  unsupportedGrant: () =>
    authError(
      400,
      'unsupported_grant_type',
      'unsupported_grant_type: use password, refresh_token, pkce or id_token',
    ),
  refreshNotFound: () =>
    authError(400, 'refresh_token_not_found', 'Invalid Refresh Token: Refresh Token Not Found'),
  refreshAlreadyUsed: () =>
    authError(400, 'refresh_token_already_used', 'Invalid Refresh Token: Already Used'),
  refreshExpired: () => authError(400, 'session_expired', 'Invalid Refresh Token: Session Expired'),
  emailNotConfirmed: () => authError(400, 'email_not_confirmed', 'Email not confirmed'),
  userBanned: () => authError(400, 'user_banned', 'User is banned'),
  /** an access token issued before its user's ban (GoTrue answers 403 on every authenticated route) */
  bannedCaller: () => authError(403, 'user_banned', 'User is banned'),
  refreshUserBanned: () => authError(400, 'user_banned', 'Invalid Refresh Token: User Banned'),
  noAuthorization: () =>
    authError(401, 'no_authorization', 'This endpoint requires a valid Bearer token', {
      'WWW-Authenticate': 'Bearer',
    }),
  badJwt: (reason: string) =>
    authError(401, 'bad_jwt', `invalid JWT: ${reason}`, {
      'WWW-Authenticate': `Bearer error="invalid_token"`,
    }),
  sessionNotFound: () =>
    authError(401, 'session_not_found', 'Session from session_id claim in JWT does not exist'),
  userNotFoundForToken: () => authError(401, 'user_not_found', 'User from sub claim in JWT does not exist'),
  notAdmin: () => authError(403, 'not_admin', 'User not allowed'),
  appMetadataNotAllowed: () => authError(403, 'not_admin', 'Updating app_metadata requires admin privileges'),
  anonymousNotAllowed: () =>
    authError(403, 'no_authorization', 'Anonymous user not allowed to perform these actions'),
  insufficientAalForCredentials: () =>
    authError(
      401,
      'insufficient_aal',
      'AAL2 session is required to update email or password when MFA is enabled.',
    ),
  userNotFound: () => authError(404, 'user_not_found', 'User not found'),
  invalidApiKey: () =>
    authError(401, 'invalid_api_key', 'Invalid API key: send the project key in the apikey header'),
  weakPassword: (min: number) =>
    authError(422, 'weak_password', `Password should be at least ${min} characters.`),
  samePassword: () =>
    authError(422, 'same_password', 'New password should be different from the old password.'),
  userAlreadyExists: () => authError(422, 'user_already_exists', 'User already registered'),
  emailExists: () =>
    authError(422, 'email_exists', 'A user with this email address has already been registered'),
  signupDisabled: () => authError(422, 'signup_disabled', 'Signups not allowed for this instance'),
  rateLimited: (retryAfterSeconds: number) =>
    authError(429, 'over_request_rate_limit', 'Request rate limit reached', {
      'Retry-After': String(retryAfterSeconds),
    }),
  /** A link (token_hash) that is unknown, used, expired or of another type: GoTrue's words. */
  linkInvalid: () => authError(403, 'otp_expired', 'Email link is invalid or has expired'),
  /** An e-mail code (or phone code) that is wrong, used or expired: GoTrue's words. */
  otpInvalid: () => authError(403, 'otp_expired', 'Token has expired or is invalid'),
  /** GoTrue's per-address e-mail frequency (SMTP_MAX_FREQUENCY). */
  emailFrequency: (retryAfterSeconds: number) =>
    authError(
      429,
      'over_email_send_rate_limit',
      `For security purposes, you can only request this after ${retryAfterSeconds} seconds.`,
      { 'Retry-After': String(retryAfterSeconds) },
    ),
  /** GoTrue's hourly limit on e-mails sent (RATE_LIMIT_EMAIL_SENT). */
  emailRateLimit: (retryAfterSeconds: number) =>
    authError(429, 'over_email_send_rate_limit', 'email rate limit exceeded', {
      'Retry-After': String(retryAfterSeconds),
    }),
  /** A password grant from an address that must wait; the page shows the message, so it says how long. */
  signInWait: (retryAfterSeconds: number) =>
    authError(
      429,
      'over_request_rate_limit',
      `Too many sign-in attempts; try again in ${count(retryAfterSeconds, 'second')}`,
      { 'Retry-After': String(retryAfterSeconds) },
    ),
};
