// In charge of POST /token: the password grant (with the sign-in backoff), the refresh grant
// (rotation with reuse detection and the per-session limit) and the PKCE grant (an e-mail link's
// or provider sign-in's code and the client's verifier, exchanged once for a session; a linking
// flow's identity is joined to the user here, for the verifier's holder only).
import { withService } from '../../db/transactions.js';
import { recordAccountEvent } from '../audit.js';
import { errors } from '../errors.js';
import { hashCallers } from '../hash-queue.js';
import { isBcryptHash } from '../passwords.js';
import { accountForProviderUser } from '../oauth/accounts.js';
import { exchangeAuthCode } from '../pkce.js';
import { openSession, refreshGrantInOneCall } from '../sessions.js';
import { beginPasswordSignIn, passwordWasRight } from '../sign-in-backoff.js';
import { phoneErrors } from '../sms/phone-codes.js';
import {
  findUserById,
  isBanned,
  normalizeEmail,
  replacePasswordHash,
  SELECT_USER,
  type UserWithIdentities,
} from '../users.js';
import { tokenResponse, type IdentityDeps, type RequestContext, type TokenResponse } from './context.js';

export async function passwordGrant(
  deps: IdentityDeps,
  email: string,
  password: string,
  context: RequestContext,
): Promise<TokenResponse> {
  const normalized = normalizeEmail(email);
  // One round trip: the attempt is counted (a failure until the password proves right) and the
  // user looked up, unless this address must wait for this e-mail.
  const attempt = await beginPasswordSignIn(deps.pool, normalized, context.ip, deps.settings.rateLimits);
  if (attempt.kind === 'wait') throw errors.signInWait(attempt.retryAfterSeconds);
  const { user } = attempt;
  // Nobody is signed in yet: the client's address is the caller whose hashes take turns.
  const caller = hashCallers.address(context.ip);
  // Unknown user and wrong password take the same time and get the same answer.
  const valid = user?.encrypted_password
    ? await deps.passwords.verify(caller, user.encrypted_password, password)
    : await deps.passwords.verifyDecoy(caller, password);
  if (!user || !valid) {
    // Nothing changed: the failure is its own line, the address it came from with it.
    await recordAccountEvent(deps.pool, {
      action: 'login_failed',
      userId: user?.id ?? null,
      actor: { type: 'anonymous' },
      details: { method: 'password', ...(user ? {} : { email: normalized.slice(0, 320) }) },
      context,
    });
    throw errors.invalidCredentials();
  }
  if (isBanned(user) || !user.email_confirmed_at) {
    await passwordWasRight(deps.pool, normalized, context.ip);
    throw isBanned(user) ? errors.userBanned() : errors.emailNotConfirmed();
  }
  const session = await openSession(deps.pool, user.id, 'password', context, normalized);
  if (isBcryptHash(user.encrypted_password!)) {
    // An imported bcrypt hash, now that its password is known: from here on the password is
    // stored as every other is. Unless it changed meanwhile (the old hash is the condition).
    const upgraded = await deps.passwords.hash(caller, password);
    await withService(deps.pool, (tx) =>
      replacePasswordHash(tx, user.id, user.encrypted_password!, upgraded),
    );
  }
  return tokenResponse(deps, { ...user, last_sign_in_at: new Date() }, session);
}

/**
 * The password grant for a phone account: the same backoff, keyed by the number (`+digits`, which
 * no e-mail address can be), and GoTrue's phone_not_confirmed for a number never proved.
 */
export async function phonePasswordGrant(
  deps: IdentityDeps,
  phone: string,
  password: string,
  context: RequestContext,
): Promise<TokenResponse> {
  const key = `+${phone}`;
  const attempt = await beginPasswordSignIn(deps.pool, key, context.ip, deps.settings.rateLimits);
  if (attempt.kind === 'wait') throw errors.signInWait(attempt.retryAfterSeconds);
  const found = await deps.pool.query<UserWithIdentities>(`${SELECT_USER} where u.phone = $1`, [phone]);
  const user = found.rows[0] ?? null;
  const caller = hashCallers.address(context.ip);
  const valid = user?.encrypted_password
    ? await deps.passwords.verify(caller, user.encrypted_password, password)
    : await deps.passwords.verifyDecoy(caller, password);
  if (!user || !valid) throw errors.invalidCredentials();
  if (isBanned(user) || !user.phone_confirmed_at) {
    await passwordWasRight(deps.pool, key, context.ip);
    throw isBanned(user) ? errors.userBanned() : phoneErrors.notConfirmed();
  }
  const session = await openSession(deps.pool, user.id, 'password', context, key);
  return tokenResponse(deps, { ...user, last_sign_in_at: new Date() }, session);
}

/** The limits every refresh of a session runs under, whichever endpoint asks for it. */
export function refreshOptions(settings: IdentityDeps['settings']) {
  return {
    ttlSeconds: settings.refreshTokenTtlSeconds,
    reuseIntervalSeconds: settings.refreshTokenReuseIntervalSeconds,
    maxPerSession: settings.rateLimits.refreshPerSession,
    tracesPerAddress: settings.rateLimits.refreshTracesPerAddress,
    windowSeconds: settings.rateLimits.windowSeconds,
  };
}

export async function refreshGrant(
  deps: IdentityDeps,
  refreshToken: string,
  context: RequestContext,
): Promise<TokenResponse> {
  const { settings } = deps;
  const outcome = await refreshGrantInOneCall(
    deps.pool,
    deps.refreshKey,
    refreshToken,
    refreshOptions(settings),
    context.ip,
  );
  switch (outcome.kind) {
    case 'granted':
      return tokenResponse(deps, outcome.user, outcome.session);
    case 'rate_limited':
      throw errors.rateLimited(outcome.retryAfterSeconds);
    case 'reuse_detected':
      throw errors.refreshAlreadyUsed();
    case 'expired':
      throw errors.refreshExpired();
    case 'banned':
      throw errors.refreshUserBanned();
    default:
      throw errors.refreshNotFound();
  }
}

/** POST /token?grant_type=pkce: the session whose amr is the flow's method (email/signup, recovery, ...). */
export async function pkceGrant(
  deps: IdentityDeps,
  authCode: string,
  codeVerifier: string,
  context: RequestContext,
): Promise<TokenResponse> {
  if (!authCode || !codeVerifier) {
    throw errors.validation('invalid request: both auth code and code verifier should be non-empty');
  }
  return withService(deps.pool, async (tx) => {
    const flow = await exchangeAuthCode(tx, authCode, codeVerifier);
    if (flow.pendingIdentity) {
      const { provider, subject, email, emailVerified, identityData } = flow.pendingIdentity;
      await accountForProviderUser(tx, {
        provider,
        label: provider,
        person: { subject, email, emailVerified, identityData, accessToken: '', refreshToken: null },
        linkingUserId: flow.userId,
        autoconfirm: deps.settings.autoconfirm,
        disableSignup: deps.settings.disableSignup,
      });
    }
    const user = await findUserById(tx, flow.userId);
    if (!user) throw errors.userNotFound();
    if (isBanned(user)) throw errors.userBanned();
    const session = await openSession(tx, user.id, flow.authenticationMethod, context);
    return tokenResponse(deps, { ...user, last_sign_in_at: new Date() }, session);
  });
}
