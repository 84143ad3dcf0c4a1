// In charge of /verify, as GoTrue serves it: POST with {type, token_hash} or {type, email, token}
// answers a session; GET (the link in an e-mail, no apikey) redirects to the allowed redirect_to
// with the session in the URL fragment, or with ?code= when the link belongs to a PKCE flow, or
// with GoTrue's #error=… on failure. What a verified token does (confirm the address, finish an
// e-mail change, ...) is one handler per verification type in VERIFY_HANDLERS.
import type { Tx } from '../../db/transactions.js';
import { withService } from '../../db/transactions.js';
import { HttpError, isHttpError } from '../../http/errors.js';
import { recordAccountEvent } from '../audit.js';
import { authError, errors } from '../errors.js';
import {
  clearOneTimeTokens,
  consumeByLinkToken,
  consumeByOtp,
  PKCE_PREFIX,
  type ConsumedToken,
  type OneTimeTokenType,
} from '../one-time-tokens.js';
import { deleteFlowState, issueAuthCode } from '../pkce.js';
import { countHits, limitsReached, type Limit } from '../rate-limit.js';
import { chooseRedirect } from '../redirects.js';
import { openSession } from '../sessions.js';
import { completePhoneChange, confirmPhone } from '../phone-accounts.js';
import { claimUnprovenAccount } from '../unproven-accounts.js';
import { findUserById, isBanned, normalizeEmail, updateUser, type UserWithIdentities } from '../users.js';
import { tokenResponse, type IdentityDeps, type RequestContext, type TokenResponse } from './context.js';

export const verifyErrors = {
  pkceLinkNeedsExchange: () =>
    authError(
      400,
      'bad_code_verifier',
      'This link belongs to a PKCE flow: open it in the browser that asked for it, which exchanges its code with the code verifier',
    ),
};

/** GoTrue's verification types (VerifyParams.Type). */
export const VERIFICATION_TYPES = [
  'signup',
  'invite',
  'magiclink',
  'recovery',
  'email_change',
  'email',
  'sms',
  'phone_change',
] as const;
export type VerificationType = (typeof VERIFICATION_TYPES)[number];

/** What a verified token leads to. */
export type VerifyCompletion =
  /** sign the user in; `amr` is the session's method (GoTrue's `otp` unless said otherwise) */
  | { kind: 'session'; amr?: string }
  /** no session yet: GoTrue's `{msg, code: "200"}` (the first half of a secure e-mail change) */
  | { kind: 'message'; message: string };

export interface VerifyHandler {
  /** the token types this verification type accepts */
  tokenTypes: readonly OneTimeTokenType[];
  /** applies what the verification proves, inside the verification's transaction */
  complete(
    tx: Tx,
    deps: IdentityDeps,
    user: UserWithIdentities,
    token: ConsumedToken,
  ): Promise<VerifyCompletion>;
}

/** Marks the user's e-mail address (and its e-mail identity) as confirmed. */
export async function confirmEmail(tx: Tx, user: UserWithIdentities): Promise<void> {
  await tx.query(
    `update auth.users set email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now()
     where id = $1`,
    [user.id],
  );
  await tx.query(
    `update auth.identities set identity_data = identity_data || '{"email_verified": true}'::jsonb,
       updated_at = now()
     where user_id = $1 and provider = 'email' and identity_data->>'email' = $2`,
    [user.id, user.email],
  );
}

// The address is proved by the link or code either way; a recovery or magic link also confirms
// an address that never was (GoTrue's recoverVerify).
const confirmAndSignIn: VerifyHandler['complete'] = async (tx, _deps, user) => {
  await confirmEmail(tx, user);
  return { kind: 'session' };
};

/** GoTrue's answer to the first of the two confirmations of a secure e-mail change. */
export const SINGLE_CONFIRMATION_ACCEPTED =
  'Confirmation link accepted. Please proceed to confirm link sent to the other email';

/**
 * An e-mail change confirmed from one address (GoTrue's emailChangeVerify): with secure e-mail
 * change (and no autoconfirm) the first confirmation only counts, and the second one, from the
 * other address, makes the new address the account's; otherwise the one confirmation does.
 */
const confirmEmailChange: VerifyHandler['complete'] = async (tx, deps, user, token) => {
  const belongs =
    user.email_change !== null &&
    (token.type === 'email_change_token_new'
      ? token.relatesTo === user.email_change
      : token.relatesTo === (user.email ?? ''));
  // A confirmation of a change since replaced or cancelled proves nothing.
  if (!belongs) throw errors.otpInvalid();
  if (
    deps.settings.secureEmailChange &&
    !deps.settings.autoconfirm &&
    user.email_change_confirm_status === 0 &&
    user.email
  ) {
    await tx.query(
      'update auth.users set email_change_confirm_status = 1, updated_at = now() where id = $1',
      [user.id],
    );
    await recordAccountEvent(tx, {
      action: 'user_modified',
      userId: user.id,
      details: { email_change: 'confirmed_one', confirmed: confirmedSide(token) },
    });
    return { kind: 'message', message: SINGLE_CONFIRMATION_ACCEPTED };
  }
  const newEmail = user.email_change!;
  await tx.query(
    `update auth.users set email_change = null, email_change_confirm_status = 0, updated_at = now()
     where id = $1`,
    [user.id],
  );
  if (!(await updateUser(tx, user.id, { email: newEmail, confirm: true }))) throw errors.emailExists();
  await tx.query(
    `update auth.identities set identity_data = identity_data || '{"email_verified": true}'::jsonb
     where user_id = $1 and provider = 'email'`,
    [user.id],
  );
  // Links and codes sent to the old address (confirmation, recovery, the other half) are void now.
  await clearOneTimeTokens(tx, user.id);
  await recordAccountEvent(tx, {
    action: 'user_modified',
    userId: user.id,
    details: { email_change: 'completed', confirmed: confirmedSide(token) },
  });
  return { kind: 'session' };
};

/** Which address a confirmation came from, for the audit line (never the address itself). */
function confirmedSide(token: ConsumedToken): 'new_address' | 'current_address' {
  return token.type === 'email_change_token_new' ? 'new_address' : 'current_address';
}

export const VERIFY_HANDLERS: Partial<Record<VerificationType, VerifyHandler>> = {
  signup: { tokenTypes: ['confirmation_token'], complete: confirmAndSignIn },
  invite: { tokenTypes: ['confirmation_token'], complete: confirmAndSignIn },
  magiclink: { tokenTypes: ['recovery_token'], complete: confirmAndSignIn },
  // A recovery session says so in its amr, so the app (and PUT /user) can tell it apart.
  recovery: {
    tokenTypes: ['recovery_token'],
    complete: async (tx, deps, user, token) => {
      await confirmAndSignIn(tx, deps, user, token);
      return { kind: 'session', amr: 'recovery' };
    },
  },
  // A code typed from any e-mail that sent one: a confirmation or a magic link / recovery.
  email: { tokenTypes: ['confirmation_token', 'recovery_token'], complete: confirmAndSignIn },
  email_change: {
    tokenTypes: ['email_change_token_new', 'email_change_token_current'],
    complete: confirmEmailChange,
  },
  // A phone code: a sign-up's or a sign-in's (GoTrue sends both as the confirmation OTP).
  sms: {
    tokenTypes: ['confirmation_token'],
    complete: async (tx, _deps, user, token) => {
      await confirmPhone(tx, user, token.proposal);
      return { kind: 'session' };
    },
  },
  // The new number's code: it becomes the account's number, if the change is still the pending one.
  phone_change: {
    tokenTypes: ['phone_change_token'],
    complete: async (tx, _deps, user, token) => {
      if (!user.phone_change || user.phone_change !== token.relatesTo) throw errors.otpInvalid();
      await completePhoneChange(tx, user.id, token.relatesTo);
      // Codes sent to the old number are void now.
      await clearOneTimeTokens(tx, user.id, ['confirmation_token', 'reauthentication_token']);
      return { kind: 'session' };
    },
  },
};

export type VerifyInput =
  | { type: string; tokenHash: string }
  | { type: string; email: string; token: string }
  | { type: string; phone: string; token: string };

/** What a verification came to, before it is rendered as JSON (POST) or a redirect (GET). */
type Verified =
  | { kind: 'session'; response: TokenResponse; type: string }
  | { kind: 'code'; code: string }
  | { kind: 'message'; message: string };

function failureLimits(deps: IdentityDeps, context: RequestContext, address: string | null): Limit[] {
  const limits = deps.settings.rateLimits;
  const list: Limit[] = [];
  if (context.ip) {
    list.push({
      bucket: `verify-fail:ip:${context.ip}`,
      max: limits.verifyFailuresPerAddress,
      windowSeconds: limits.windowSeconds,
    });
  }
  if (address) {
    list.push({ bucket: `otp-fail:email:${address}`, max: limits.otpFailuresPerEmail, windowSeconds: 3600 });
  }
  return list;
}

/**
 * A refused code or link is a `login_failed` line, by nobody yet, about the account the address or
 * number names when there is one (a link names nobody until it is found). Nothing else changes, so
 * the line goes with the failure count; never the code or the link's hash.
 */
async function recordFailedVerification(
  tx: Tx,
  input: VerifyInput,
  context: RequestContext,
  reason: 'invalid_code' | 'no_live_code' | 'invalid_link' | 'address_changed',
  email: string | null,
  phone: string | null,
  knownUserId: string | null = null,
): Promise<void> {
  let userId = knownUserId;
  if (userId === null && (email !== null || phone !== null)) {
    const found = await tx.query<{ id: string }>(
      email !== null
        ? 'select id from auth.users where email = $1 limit 1'
        : 'select id from auth.users where phone = $1 limit 1',
      [email ?? phone],
    );
    userId = found.rows[0]?.id ?? null;
  }
  await recordAccountEvent(tx, {
    action: 'login_failed',
    userId,
    actor: { type: 'anonymous' },
    details: {
      method: 'verify',
      type: input.type.slice(0, 32),
      reason,
      // an address with no account is kept as typed, as a failed password sign-in keeps it
      ...(userId === null && email !== null ? { email: email.slice(0, 320) } : {}),
    },
    context,
  });
}

/**
 * The verification itself, in one transaction: limits, the token consumed, the user checked, the
 * handler applied, then a session (or, for a PKCE link followed with GET, the flow's code).
 * Failures are counted and committed before the refusal is thrown.
 */
async function verifyToken(
  deps: IdentityDeps,
  input: VerifyInput,
  context: RequestContext,
  options: { pkceCode: boolean },
): Promise<Verified> {
  const byLink = 'tokenHash' in input;
  const handler = VERIFY_HANDLERS[input.type as VerificationType];
  if (byLink && (!handler || input.type === 'sms' || input.type === 'phone_change')) {
    throw errors.validation('Invalid email verification type');
  }
  const refusal = byLink ? errors.linkInvalid : errors.otpInvalid;
  const email = 'email' in input ? normalizeEmail(input.email) : null;
  const phone = 'phone' in input ? input.phone : null;
  // A phone's wrong codes are counted per number as an address's are (its bucket is `+digits`).
  const limits = failureLimits(deps, context, email ?? (phone ? `+${phone}` : null));
  const wait = await limitsReached(deps.pool, limits);
  if (wait > 0) throw errors.rateLimited(wait);

  const outcome = await withService(deps.pool, async (tx): Promise<Verified | null> => {
    let token: ConsumedToken | null = null;
    // why a code was refused: a wrong one, or none alive for the address (expired, used, unknown)
    let miss: 'invalid_code' | 'no_live_code' = 'no_live_code';
    if (handler && 'tokenHash' in input) {
      // A link issued for a PKCE flow is bound to the browser that asked for it: it yields a
      // session only through GET /verify's code and that browser's verifier, never here.
      const found = await consumeByLinkToken(tx, input.tokenHash, handler.tokenTypes, {
        pkceFlows: options.pkceCode,
      });
      if (found && 'pkce' in found) throw verifyErrors.pkceLinkNeedsExchange();
      token = found;
    } else if (handler && 'email' in input) {
      const result = await consumeByOtp(tx, deps.email.tokenKey, {
        address: input.email,
        types: handler.tokenTypes,
        otp: input.token,
        maxAttempts: deps.settings.otpMaxAttempts,
      });
      if (result.kind === 'verified') token = result.token;
      else if (result.kind === 'wrong') miss = 'invalid_code';
    } else if (handler && 'phone' in input) {
      const result = await consumeByOtp(tx, deps.phone.tokenKey, {
        address: input.phone,
        types: handler.tokenTypes,
        otp: input.token,
        maxAttempts: deps.settings.otpMaxAttempts,
      });
      if (result.kind === 'verified') token = result.token;
      else if (result.kind === 'wrong') miss = 'invalid_code';
    }
    if (!token) {
      await countHits(tx, limits);
      await recordFailedVerification(tx, input, context, byLink ? 'invalid_link' : miss, email, phone);
      return null;
    }
    const user = await findUserById(tx, token.userId);
    // A confirmation or recovery e-mail proves only the address it went to: if the account's
    // address changed since, the token is void.
    const ownAddress =
      !phone && token.type !== 'email_change_token_new' && token.type !== 'email_change_token_current';
    // Likewise a phone code sent for sign-in proves only the number it went to.
    const ownPhone = phone !== null && token.type === 'confirmation_token';
    if (
      !user ||
      (ownAddress && token.relatesTo !== user.email) ||
      (ownPhone && token.relatesTo !== (user.phone ?? ''))
    ) {
      await countHits(tx, limits);
      // the token names its account even when a link was followed
      await recordFailedVerification(tx, input, context, 'address_changed', email, phone, token.userId);
      return null;
    }
    if (isBanned(user)) throw authError(403, 'user_banned', 'User is banned');
    // The first proof that someone owns the account's address: what the account's unproven
    // creator set goes, and only what this token's own flow asked for stays.
    const claimed =
      ownAddress &&
      !user.email_confirmed_at &&
      (await claimUnprovenAccount(tx, user.id, {
        proposal: token.proposal,
        keepEmailIdentity: true,
        keepFlowStateId: token.flowStateId,
      }));
    const proved = claimed ? (await findUserById(tx, user.id))! : user;
    const completion = await handler!.complete(tx, deps, proved, token);
    if (completion.kind === 'message') return completion;
    if (token.flowStateId && options.pkceCode) {
      const code = await issueAuthCode(tx, token.flowStateId);
      if (!code) throw authError(400, 'flow_state_not_found', 'No associated flow state found.');
      return { kind: 'code', code };
    }
    if (token.flowStateId) await deleteFlowState(tx, token.flowStateId);
    const session = await openSession(tx, user.id, completion.amr ?? 'otp', context);
    const fresh = (await findUserById(tx, user.id))!;
    return { kind: 'session', response: await tokenResponse(deps, fresh, session), type: input.type };
  });
  if (!outcome) throw refusal();
  return outcome;
}

/** POST /verify: a session, or GoTrue's `{msg, code}` for the first half of a secure e-mail change. */
export async function verifyPost(
  deps: IdentityDeps,
  input: VerifyInput,
  context: RequestContext,
): Promise<TokenResponse | { msg: string; code: string }> {
  const verified = await verifyToken(deps, input, context, { pkceCode: false });
  if (verified.kind === 'message') return { msg: verified.message, code: '200' };
  if (verified.kind !== 'session') throw new Error('unreachable: POST never issues a PKCE code');
  return verified.response;
}

/** Go's url.Values.Encode: keys sorted, form encoding. */
function encodeSorted(params: Record<string, string>): string {
  return new URLSearchParams(
    Object.entries(params).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  ).toString();
}

// GoTrue's oauthErrorMap: the OAuth `error` of a failed link, by HTTP status.
const OAUTH_ERROR_BY_STATUS: Record<number, string> = {
  400: 'invalid_request',
  401: 'unauthorized_client',
  403: 'access_denied',
  500: 'server_error',
  503: 'temporarily_unavailable',
};

function errorRedirect(base: string, error: HttpError, pkce: boolean): string {
  const url = new URL(base);
  const params: Record<string, string> = { error_code: error.code, error_description: error.message };
  const oauth = OAUTH_ERROR_BY_STATUS[error.status];
  if (oauth) params.error = oauth;
  if (pkce) for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  url.hash = encodeSorted({ ...params, sb: '' });
  return url.toString();
}

/**
 * GET /verify: where to send the browser (303). Bad parameters are thrown (JSON, as GoTrue); a
 * failed verification becomes an error redirect, so the app's page can tell the user.
 */
export async function verifyGet(
  deps: IdentityDeps,
  input: { type: string; token: string; redirectTo: string | undefined; referer: string | null },
  context: RequestContext,
): Promise<string> {
  const redirect = chooseRedirect(deps.redirects, input.redirectTo, input.referer);
  const pkce = input.token.startsWith(PKCE_PREFIX);
  let verified: Verified;
  try {
    verified = await verifyToken(deps, { type: input.type, tokenHash: input.token }, context, {
      pkceCode: true,
    });
  } catch (error) {
    if (isHttpError(error)) return errorRedirect(redirect, error, pkce);
    throw error;
  }
  const url = new URL(redirect);
  if (verified.kind === 'code') {
    url.searchParams.set('code', verified.code);
    return url.toString();
  }
  if (verified.kind === 'message') {
    if (pkce) url.searchParams.set('message', verified.message);
    url.hash = encodeSorted({ message: verified.message, sb: '' });
    return url.toString();
  }
  const { response } = verified;
  url.hash = encodeSorted({
    access_token: response.access_token,
    token_type: response.token_type,
    expires_in: String(response.expires_in),
    expires_at: String(response.expires_at),
    refresh_token: response.refresh_token,
    type: verified.type,
    sb: '',
  });
  return url.toString();
}
