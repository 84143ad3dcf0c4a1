// In charge of the signed-in user's own account: GET /user, PUT /user (metadata, a password change
// with GoTrue's optional proofs, an e-mail change that takes effect only once confirmed by
// e-mail), GET /reauthenticate (a code by e-mail for a password change), POST /logout, and
// deleting one's own account (the web app's settings).
import { withService } from '../../db/transactions.js';
import { recordAccountEvent } from '../audit.js';
import type { AccessTokenClaims } from '../access-tokens.js';
import { sendEmailAction, sendEmailChange } from '../email-actions.js';
import { authError, errors } from '../errors.js';
import { consumeByOtp } from '../one-time-tokens.js';
import { completePhoneChange } from '../phone-accounts.js';
import { phoneErrors, sendPhoneCode } from '../sms/phone-codes.js';
import type { SmsChannel } from '../sms/provider.js';
import { beginPasswordSignIn, passwordWasRight } from '../sign-in-backoff.js';
import { hashCallers } from '../hash-queue.js';
import type { PkceChallenge } from '../pkce.js';
import { enforceLimits } from '../rate-limit.js';
import { chooseRedirect } from '../redirects.js';
import { logout, type LogoutScope } from '../sessions.js';
import {
  findUserById,
  normalizeEmail,
  renderUser,
  updateUser,
  type UserChanges,
  type UserWithIdentities,
} from '../users.js';
import { adminDeleteUser } from './admin.js';
import { checkPasswordStrength, requireLiveUser, type IdentityDeps } from './context.js';
import { sessionAal } from './mfa.js';

/** The signed-in user, provided the session behind the token still exists. */
export async function currentUser(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
): Promise<Record<string, unknown>> {
  return renderUser(await requireLiveUser(deps.pool, claims));
}

export interface UserUpdate {
  email?: string;
  password?: string;
  /** the current password, when REQUIRE_CURRENT_PASSWORD (or requireCurrentPassword) asks for it */
  currentPassword?: string | null | undefined;
  /** ask for the current password whatever REQUIRE_CURRENT_PASSWORD says (the web app always does) */
  requireCurrentPassword?: boolean;
  /** the client's address: wrong current passwords count towards the sign-in backoff */
  address?: string | null;
  /** the reauthentication code, when SECURE_PASSWORD_CHANGE asks for it */
  nonce?: string | null | undefined;
  data?: Record<string, unknown>;
  /** a new phone number (E.164 digits): confirmed by a code to it (verify type phone_change) */
  phone?: string;
  /** how that code goes (sms or whatsapp) */
  channel?: SmsChannel;
  /** the client's PKCE challenge: the e-mail change links then end in ?code= */
  pkce?: PkceChallenge | null;
  redirectTo?: string | undefined;
  referer?: string | null;
}

/** GoTrue's rule: a session older than this needs a reauthentication code to change the password. */
const RECENT_SIGN_IN_MS = 24 * 3600 * 1000;

const CURRENT_PASSWORD_MESSAGE = 'Current password required when setting new password.';

/**
 * A session a recovery link opened within the last RECOVERY_SESSION_WINDOW seconds: whoever forgot
 * the password cannot give it, so such a session sets a new one without it. Later (a reset link's
 * session kept for days, or found on a shared computer) it is a session like any other.
 */
export function isRecentRecovery(claims: AccessTokenClaims, windowSeconds: number): boolean {
  const now = Math.floor(Date.now() / 1000);
  return claims.amr.some((entry) => entry.method === 'recovery' && now - entry.timestamp <= windowSeconds);
}

/**
 * The proofs GoTrue asks of a password change, in its order: with SECURE_PASSWORD_CHANGE, a
 * session older than 24 hours must bring the e-mailed reauthentication code (used up, even if the
 * change then fails, as GoTrue does); with REQUIRE_CURRENT_PASSWORD (or when the caller asks), the
 * current password, except in a recent recovery session (whoever forgot it cannot give it).
 */
async function checkPasswordChangeProofs(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  input: UserUpdate,
): Promise<void> {
  const { settings } = deps;
  if (settings.securePasswordChange) {
    const session = await deps.pool.query<{ created_at: Date }>(
      'select created_at from auth.sessions where id = $1 and user_id = $2',
      [claims.session_id, claims.sub],
    );
    const createdAt = session.rows[0]?.created_at;
    if (!createdAt || Date.now() - new Date(createdAt).getTime() > RECENT_SIGN_IN_MS) {
      if (!input.nonce) {
        throw authError(400, 'reauthentication_needed', 'Password update requires reauthentication');
      }
      // Its own transaction: a wrong code's counted attempt must survive the refusal.
      const verified = await withService(deps.pool, async (tx) => {
        const user = await requireLiveUser(tx, claims);
        if (!user.email) return false;
        const outcome = await consumeByOtp(tx, deps.email.tokenKey, {
          address: user.email,
          types: ['reauthentication_token'],
          otp: input.nonce!,
          maxAttempts: settings.otpMaxAttempts,
        });
        return outcome.kind === 'verified' && outcome.token.userId === user.id;
      });
      if (!verified) {
        throw authError(422, 'reauthentication_not_valid', 'Nonce has expired or is invalid');
      }
    }
  }
  const required = settings.requireCurrentPassword || input.requireCurrentPassword === true;
  if (required && !isRecentRecovery(claims, settings.recoverySessionSeconds)) {
    await proveCurrentPassword(
      deps,
      await requireLiveUser(deps.pool, claims),
      input.currentPassword,
      input.address,
    );
  }
}

/**
 * The current password, checked as a sign-in is: guessing it from a signed-in screen is guessing a
 * password, so it goes through the sign-in backoff (counted as a failure until it proves right).
 * An account without a password (or an address) has nothing to prove here.
 */
async function proveCurrentPassword(
  deps: IdentityDeps,
  user: UserWithIdentities,
  currentPassword: string | null | undefined,
  address: string | null | undefined,
): Promise<void> {
  if (!signsInWithPassword(user)) return;
  if (!currentPassword) throw authError(400, 'current_password_required', CURRENT_PASSWORD_MESSAGE);
  const email = normalizeEmail(user.email);
  const attempt = await beginPasswordSignIn(deps.pool, email, address ?? null, deps.settings.rateLimits);
  if (attempt.kind === 'wait') throw errors.signInWait(attempt.retryAfterSeconds);
  if (!(await deps.passwords.verify(hashCallers.user(user.id), user.encrypted_password, currentPassword))) {
    throw authError(400, 'current_password_invalid', CURRENT_PASSWORD_MESSAGE);
  }
  await passwordWasRight(deps.pool, email, address ?? null);
}

/** Whether a password (with an address to sign in by) proves the account is the caller's. */
function signsInWithPassword(
  user: UserWithIdentities,
): user is UserWithIdentities & { encrypted_password: string; email: string } {
  return Boolean(user.encrypted_password && user.email);
}

/**
 * GoTrue's rule for the credentials (and here for deleting the account): once the user has a
 * verified second factor, only a session that passed it. Otherwise whoever has the first factor
 * alone (a stolen password, a recovery link) could lock the owner out.
 */
async function requireSecondFactorPassed(
  deps: IdentityDeps,
  user: UserWithIdentities,
  claims: AccessTokenClaims,
): Promise<void> {
  if (
    user.factors?.some((factor) => factor.status === 'verified') &&
    (await sessionAal(deps.pool, claims.session_id)) !== 'aal2'
  ) {
    throw errors.insufficientAalForCredentials();
  }
}

/** What the account settings show beyond the profile, from one read of the signed-in user. */
export interface AccountSettings {
  /** the address the account signs in with now (a token may still carry the one before a change) */
  email: string | null;
  pendingEmail: string | null;
  /** whether a pending change also waits for the link sent to the current address */
  confirmsBothAddresses: boolean;
  hasPassword: boolean;
}

export async function accountSettings(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
): Promise<AccountSettings> {
  const user = await requireLiveUser(deps.pool, claims);
  return {
    email: user.email,
    pendingEmail: user.email_change,
    confirmsBothAddresses: deps.settings.secureEmailChange && user.email !== null,
    hasPassword: signsInWithPassword(user),
  };
}

/**
 * Withdraws the caller's pending e-mail change: the new address is forgotten and the links and
 * codes sent for it stop working, so a change asked for by mistake (or by someone at an unlocked
 * screen) cannot complete later. Nothing pending is not an error.
 */
export async function cancelEmailChange(deps: IdentityDeps, claims: AccessTokenClaims): Promise<void> {
  await withService(deps.pool, async (tx) => {
    const user = await requireLiveUser(tx, claims);
    await tx.query(
      `update auth.users set email_change = null, email_change_confirm_status = 0, updated_at = now()
       where id = $1`,
      [user.id],
    );
    await tx.query(
      `delete from auth.one_time_tokens
       where user_id = $1 and token_type in ('email_change_token_new', 'email_change_token_current')`,
      [user.id],
    );
  });
}

/**
 * Deletes the caller's own account, as the web app's settings offer it, once the caller proves
 * the account is theirs: its current password, or for an account without one its address typed
 * out; with a verified second factor, from a session that passed it. The deletion is the service
 * role's hard one, with its rule for workspaces (409 while the last owner of a team).
 */
export async function deleteOwnAccount(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  proof: { currentPassword?: string | null; email?: string | null; address?: string | null },
): Promise<void> {
  // Proving the password is a hash: the request holds one of the user's places in the queue.
  return deps.passwords.queue.within(hashCallers.user(claims.sub), async () => {
    const user = await requireLiveUser(deps.pool, claims);
    await requireSecondFactorPassed(deps, user, claims);
    if (signsInWithPassword(user)) {
      await proveCurrentPassword(deps, user, proof.currentPassword, proof.address);
    } else if (!proof.email || normalizeEmail(proof.email) !== (user.email ?? '')) {
      throw authError(400, 'email_mismatch', 'Type the e-mail address of this account to confirm');
    }
    await adminDeleteUser(deps, user.id, false, { type: 'user', id: user.id });
  });
}

export async function updateCurrentUser(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  input: UserUpdate,
): Promise<Record<string, unknown>> {
  const { settings } = deps;
  if (input.password === undefined) return applyUserUpdate(deps, claims, input);
  checkPasswordStrength(settings, input.password);
  // A password change hashes two or three times: it holds one of the user's places in the hash
  // queue from here on, and a user already holding their share is refused before anything else.
  return deps.passwords.queue.within(hashCallers.user(claims.sub), () =>
    applyUserUpdate(deps, claims, input),
  );
}

async function applyUserUpdate(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  input: UserUpdate,
): Promise<Record<string, unknown>> {
  const { settings } = deps;
  const before = await requireLiveUser(deps.pool, claims);
  // Each change costs two password hashes (three with the current password): counted per user
  // before any of them, so one account cannot keep the hashing threads busy.
  if (input.password !== undefined) {
    await enforceLimits(deps.pool, [
      {
        bucket: `password-change:user:${before.id}`,
        max: settings.rateLimits.passwordChangesPerUser,
        windowSeconds: settings.rateLimits.windowSeconds,
      },
    ]);
  }
  const newEmail =
    input.email !== undefined && normalizeEmail(input.email) !== before.email
      ? normalizeEmail(input.email)
      : null;
  const newPhone = input.phone !== undefined && input.phone !== (before.phone ?? '') ? input.phone : null;
  if (newPhone && !deps.phone.sender) throw phoneErrors.loginsDisabled();
  // The password, the address and the phone change only from a session that passed a verified
  // second factor.
  const changesCredentials =
    (input.password !== undefined && input.password !== '') || newEmail !== null || newPhone !== null;
  if (changesCredentials) await requireSecondFactorPassed(deps, before, claims);
  // A password alone would make an account nobody can sign in to by address (GoTrue's rule).
  if (before.is_anonymous && input.password && !input.email) {
    throw authError(
      422,
      'validation_failed',
      'Updating password of an anonymous user without an email or phone is not allowed',
    );
  }
  if (newEmail) {
    const taken = await deps.pool.query('select 1 from auth.users where email = $1 and id <> $2', [
      newEmail,
      before.id,
    ]);
    if (taken.rowCount) throw errors.emailExists();
  }
  if (newPhone) {
    const taken = await deps.pool.query('select 1 from auth.users where phone = $1 and id <> $2', [
      newPhone,
      before.id,
    ]);
    if (taken.rowCount) throw phoneErrors.phoneExists();
  }
  if (input.password !== undefined) await checkPasswordChangeProofs(deps, claims, input);
  // Both hashes before the transaction: a hash takes tens of milliseconds (longer while others
  // take their turns), and a transaction must not hold its connection and row locks meanwhile.
  const caller = hashCallers.user(claims.sub);
  if (input.password !== undefined && before.encrypted_password) {
    if (await deps.passwords.verify(caller, before.encrypted_password, input.password)) {
      throw errors.samePassword();
    }
  }
  const passwordHash =
    input.password === undefined ? undefined : await deps.passwords.hash(caller, input.password);
  const redirectTo = chooseRedirect(deps.redirects, input.redirectTo, input.referer);

  return withService(deps.pool, async (tx) => {
    // (A password changed meanwhile by another request was compared with the one before it; the
    // same-password rule is about reusing one's own password, which that cannot be.)
    const user = await requireLiveUser(tx, claims);
    const changes: UserChanges = {};
    if (passwordHash !== undefined) changes.passwordHash = passwordHash;
    if (input.data !== undefined) changes.userMetadata = input.data;
    await updateUser(tx, user.id, changes);
    // A new password ends every other session: whoever knew the old one is signed out.
    if (passwordHash !== undefined) {
      await logout(tx, user.id, claims.session_id, 'others');
      await recordAccountEvent(tx, { action: 'user_updated_password', userId: user.id });
    }
    if (newEmail) {
      await recordAccountEvent(tx, {
        action: 'user_modified',
        userId: user.id,
        details: { email_change: user.is_anonymous && settings.autoconfirm ? 'confirmed' : 'requested' },
      });
    }
    if (newEmail && user.is_anonymous && settings.autoconfirm) {
      // An anonymous user adding an address with autoconfirm is signing up (GoTrue): confirmed at
      // once, which makes the account permanent (migration 0028).
      if (!(await updateUser(tx, user.id, { email: newEmail, confirm: true }))) throw errors.emailExists();
    } else if (newEmail) {
      // The address changes only when confirmed by e-mail (verify type email_change); until then
      // the current one stays in force and the new one is only `new_email`.
      await tx.query('update auth.users set email_change = $2, updated_at = now() where id = $1', [
        user.id,
        newEmail,
      ]);
      const fresh = (await findUserById(tx, user.id))!;
      await sendEmailChange(tx, deps.email, {
        userId: user.id,
        currentEmail: fresh.email,
        newEmail,
        secure: settings.secureEmailChange,
        redirectTo,
        pkce: input.pkce ?? null,
        data: fresh.raw_user_meta_data,
      });
    }
    if (newPhone && deps.phone.autoconfirm) {
      // GoTrue: with SMS_AUTOCONFIRM the number is the account's at once.
      await completePhoneChange(tx, user.id, newPhone);
    } else if (newPhone) {
      // The number changes only when its code comes back (verify type phone_change).
      await tx.query('update auth.users set phone_change = $2, updated_at = now() where id = $1', [
        user.id,
        newPhone,
      ]);
      await sendPhoneCode(tx, deps.phone, {
        kind: 'phone_change',
        userId: user.id,
        phone: newPhone,
        channel: input.channel ?? 'sms',
        ip: input.address ?? null,
      });
    }
    return renderUser((await findUserById(tx, user.id))!);
  });
}

/**
 * GET /reauthenticate: e-mails the signed-in user a code for PUT /user's `nonce`. Only to a
 * confirmed address; one a minute (429 over_email_send_rate_limit), the newest code only.
 */
export async function reauthenticate(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
): Promise<Record<string, never>> {
  await withService(deps.pool, async (tx) => {
    const user = await requireLiveUser(tx, claims);
    if (!user.email) {
      throw errors.validation('Reauthentication requires the user to have an email or a phone number');
    }
    if (!user.email_confirmed_at) {
      throw authError(422, 'email_not_confirmed', 'Please verify your email first.');
    }
    await sendEmailAction(tx, deps.email, {
      action: 'reauthentication',
      userId: user.id,
      address: user.email,
      redirectTo: deps.redirects.siteUrl,
    });
  });
  return {};
}

export async function signOut(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  scope: LogoutScope,
): Promise<void> {
  await withService(deps.pool, async (tx) => {
    await logout(tx, claims.sub, claims.session_id, scope);
    await recordAccountEvent(tx, {
      action: 'logout',
      userId: claims.sub,
      target: { type: 'session', id: claims.session_id },
      details: { scope },
    });
  });
}
