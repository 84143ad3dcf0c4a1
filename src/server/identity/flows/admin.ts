// In charge of the service-role administration of users (/admin/users, /invite,
// /admin/generate_link): create, read, list, change, ban and delete, invite by e-mail, and the
// links and codes of the e-mails for an administrator to deliver. The route has already checked
// that the caller is an administrator.
import { recordAccountEvent, type AccountEvent } from '../audit.js';
import { withService, type Tx } from '../../db/transactions.js';
import { issueEmailAction, sendEmailAction } from '../email-actions.js';
import { authError, errors } from '../errors.js';
import { hashCallers } from '../hash-queue.js';
import { isVerifiableHash } from '../passwords.js';
import { chooseRedirect, isAllowedRedirect } from '../redirects.js';
import {
  deleteUser,
  softDeleteUser,
  findUserById,
  insertUser,
  isKeyPrincipal,
  listUsers,
  normalizeEmail,
  renderUser,
  SELECT_USER,
  updateUser,
  type UserChanges,
  type UserWithIdentities,
} from '../users.js';
import { checkPasswordStrength, type IdentityDeps } from './context.js';

export interface AdminNewUser {
  /** chosen by the service role; a fresh one otherwise */
  id?: string;
  email: string;
  password?: string;
  /** an argon2 or bcrypt hash to keep (a user moved over with their password) */
  passwordHash?: string;
  bannedUntil?: Date;
  emailConfirm?: boolean;
  userMetadata?: Record<string, unknown>;
  appMetadata?: Record<string, unknown>;
  invited?: boolean;
}

export async function adminCreateUser(deps: IdentityDeps, input: AdminNewUser): Promise<UserWithIdentities> {
  if (input.password !== undefined && input.passwordHash !== undefined) {
    throw errors.validation('Only a password or a password hash should be provided');
  }
  if (input.id !== undefined) checkChosenId(input.id);
  if (input.passwordHash !== undefined) checkImportedHash(input.passwordHash);
  if (input.password !== undefined) checkPasswordStrength(deps.settings, input.password);
  const passwordHash =
    input.passwordHash ??
    (input.password === undefined ? null : await deps.passwords.hash(hashCallers.service, input.password));
  return withService(deps.pool, async (tx) => {
    if (input.id !== undefined) {
      const taken = await tx.query('select 1 from auth.users where id = $1', [input.id]);
      if (taken.rowCount) throw authError(422, 'user_already_exists', 'A user with this ID already exists');
    }
    const user = await insertUser(tx, {
      ...(input.id !== undefined ? { id: input.id } : {}),
      ...(input.bannedUntil ? { bannedUntil: input.bannedUntil } : {}),
      email: input.email,
      passwordHash,
      confirmed: input.emailConfirm ?? false,
      invited: input.invited ?? false,
      userMetadata: input.userMetadata ?? {},
      appMetadata: input.appMetadata ?? {},
    });
    if (!user) throw errors.emailExists();
    return user;
  });
}

/** GoTrue's rules for an id the service role chooses. */
function checkChosenId(id: string): void {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) {
    throw errors.validation('ID must conform to the uuid v4 format');
  }
  if (/^[0-]+$/.test(id)) throw errors.validation('ID cannot be a nil uuid');
}

/**
 * An imported hash must be one sign-in can verify: argon2 (ours, or GoTrue's) or bcrypt (what
 * GoTrue and most other systems store; replaced by argon2id at the first sign-in). Firebase scrypt
 * hashes, which GoTrue also takes, are refused rather than stored unverifiable.
 */
function checkImportedHash(hash: string): void {
  if (!isVerifiableHash(hash)) {
    throw errors.validation(
      'password_hash must be an argon2 hash ($argon2id$v=19$m=...,t=...,p=...$salt$hash) or a bcrypt hash ($2a$10$...)',
    );
  }
}

/**
 * The account the admin API may look after: a person's. A workspace API key's principal answers
 * as no user at all, so it can be neither read, given a password or address (which would let it
 * sign in), nor deleted here; its workspace revokes the key instead.
 */
async function personOrNotFound(tx: Tx, id: string): Promise<UserWithIdentities> {
  const user = await findUserById(tx, id);
  if (!user || (await isKeyPrincipal(tx, id))) throw errors.userNotFound();
  return user;
}

export async function adminGetUser(deps: IdentityDeps, id: string): Promise<UserWithIdentities> {
  return withService(deps.pool, (tx) => personOrNotFound(tx, id));
}

export async function adminListUsers(deps: IdentityDeps, page: number, perPage: number) {
  return withService(deps.pool, (tx) => listUsers(tx, page, perPage));
}

export interface AdminUserUpdate {
  email?: string;
  password?: string;
  emailConfirm?: boolean;
  userMetadata?: Record<string, unknown>;
  appMetadata?: Record<string, unknown>;
  bannedUntil?: Date | null;
}

export async function adminUpdateUser(
  deps: IdentityDeps,
  id: string,
  input: AdminUserUpdate,
): Promise<UserWithIdentities> {
  if (input.password !== undefined) checkPasswordStrength(deps.settings, input.password);
  const passwordHash =
    input.password === undefined ? undefined : await deps.passwords.hash(hashCallers.service, input.password);
  return withService(deps.pool, async (tx) => {
    await personOrNotFound(tx, id);
    const changes: UserChanges = {};
    if (input.email !== undefined) changes.email = input.email;
    if (passwordHash !== undefined) changes.passwordHash = passwordHash;
    if (input.emailConfirm) changes.confirm = true;
    if (input.userMetadata !== undefined) changes.userMetadata = input.userMetadata;
    if (input.appMetadata !== undefined) changes.appMetadata = input.appMetadata;
    if (input.bannedUntil !== undefined) changes.bannedUntil = input.bannedUntil;
    if (!(await updateUser(tx, id, changes))) throw errors.emailExists();
    // A ban or a password reset by an administrator ends the user's sessions.
    if (input.bannedUntil || passwordHash !== undefined) {
      await tx.query('delete from auth.sessions where user_id = $1', [id]);
    }
    // GoTrue names every administrator's change user_modified; the details say what changed (the
    // field names, never their values) and whether the account was banned, until when, or unbanned.
    const fields = Object.keys(changes).map((k) => ADMIN_FIELD_NAMES[k as keyof UserChanges] ?? k);
    await recordAccountEvent(tx, {
      action: 'user_modified',
      userId: id,
      actor: { type: 'service' },
      details: {
        by: 'admin',
        fields,
        ...(input.bannedUntil ? { ban: 'banned', banned_until: input.bannedUntil.toISOString() } : {}),
        ...(input.bannedUntil === null ? { ban: 'unbanned' } : {}),
      },
    });
    return (await findUserById(tx, id))!;
  });
}

/** The audit line's names for what an administrator changed: the API's own field names. */
const ADMIN_FIELD_NAMES: Partial<Record<keyof UserChanges, string>> = {
  passwordHash: 'password',
  confirm: 'email_confirm',
  userMetadata: 'user_metadata',
  appMetadata: 'app_metadata',
  bannedUntil: 'ban_duration',
};

export async function adminDeleteUser(
  deps: IdentityDeps,
  id: string,
  soft: boolean,
  by: AccountEvent['actor'] = { type: 'service' },
): Promise<void> {
  let deleted: boolean;
  try {
    deleted = await withService(deps.pool, async (tx) => {
      if (await isKeyPrincipal(tx, id)) return false;
      const done = soft ? await softDeleteUser(tx, id) : await deleteUser(tx, id);
      // The line outlives the account: the audit log keeps no foreign key to it.
      if (done)
        await recordAccountEvent(tx, { action: 'user_deleted', userId: id, actor: by, details: { soft } });
      return done;
    });
  } catch (error) {
    // The database refuses to leave a workspace with members but no owner (P0001).
    const e = error as { code?: string; message?: string };
    if (e.code === 'P0001') throw authError(409, 'conflict', e.message ?? 'The user cannot be deleted yet');
    throw error;
  }
  if (!deleted) throw errors.userNotFound();
}

export interface InviteInput {
  email: string;
  data?: Record<string, unknown>;
  redirectTo?: string | undefined;
  referer?: string | null;
}

/**
 * POST /invite (auth.admin.inviteUserByEmail): the account, without a password and with
 * `invited_at`, and the invitation e-mail through the outbox, whose link (verify type `invite`)
 * confirms the address and signs the invitee in to set a password. An unconfirmed account is
 * invited again; a confirmed one is GoTrue's 422 email_exists.
 */
export async function inviteUser(deps: IdentityDeps, input: InviteInput): Promise<UserWithIdentities> {
  const email = normalizeEmail(input.email);
  const redirectTo = chooseRedirect(deps.redirects, input.redirectTo, input.referer);
  return withService(deps.pool, async (tx) => {
    const found = await tx.query<UserWithIdentities>(`${SELECT_USER} where u.email = $1 for update of u`, [
      email,
    ]);
    let user = found.rows[0] ?? null;
    if (user?.email_confirmed_at) throw errors.emailExists();
    if (!user) {
      user = await insertUser(tx, {
        email,
        passwordHash: null,
        confirmed: false,
        invited: true,
        userMetadata: input.data ?? {},
      });
      if (!user) throw errors.emailExists();
    } else {
      await tx.query('update auth.users set invited_at = now(), updated_at = now() where id = $1', [user.id]);
    }
    await sendEmailAction(tx, deps.email, {
      action: 'invite',
      userId: user.id,
      address: email,
      redirectTo,
      // The invitee sets a password after following the link; the invitation's data stays.
      proposal: { passwordHash: null, userMetadata: input.data ?? {} },
      variables: { Data: user.raw_user_meta_data },
    });
    return (await findUserById(tx, user.id))!;
  });
}

export type GenerateLinkType =
  'signup' | 'invite' | 'magiclink' | 'recovery' | 'email_change_current' | 'email_change_new';

export interface GenerateLinkInput {
  type: GenerateLinkType;
  email: string;
  /** the new address of an email_change_* link, already checked to be an address */
  newEmail?: string | null;
  password?: string | null;
  data?: Record<string, unknown> | null;
  /** redirect_to in the body (GoTrue's GenerateLinkParams), which wins when allowed */
  bodyRedirectTo?: string | null;
  /** redirect_to in the query, as auth-js sends it */
  redirectTo?: string | undefined;
  referer?: string | null;
}

/**
 * POST /admin/generate_link: what the e-mail of `type` would carry, without sending it: the user
 * plus action_link, email_otp, hashed_token, verification_type and redirect_to (auth-js splits
 * these into `properties` and `user`). The link and code replace the user's previous ones of the
 * kind and work with /verify. As GoTrue: a magic link for an unknown address is a sign-up link
 * for a new account; recovery and e-mail change links need an existing account (404).
 */
export async function adminGenerateLink(
  deps: IdentityDeps,
  input: GenerateLinkInput,
): Promise<Record<string, unknown>> {
  const email = normalizeEmail(input.email);
  const redirectTo = isAllowedRedirect(deps.redirects, input.bodyRedirectTo)
    ? input.bodyRedirectTo!
    : chooseRedirect(deps.redirects, input.redirectTo, input.referer);
  let type = input.type;
  const signupPassword = input.password ?? '';
  // Checked (and hashed) up front, used only if the sign-up creates the account (GoTrue's rule).
  if (type === 'signup' && signupPassword) checkPasswordStrength(deps.settings, signupPassword);
  const passwordHash =
    signupPassword && type === 'signup'
      ? await deps.passwords.hash(hashCallers.service, signupPassword)
      : null;
  if (type === 'email_change_current' && !deps.settings.secureEmailChange) {
    throw errors.validation('Enable secure email change to generate link for current email');
  }

  return withService(deps.pool, async (tx) => {
    const found = await tx.query<UserWithIdentities>(`${SELECT_USER} where u.email = $1 for update of u`, [
      email,
    ]);
    let user = found.rows[0] ?? null;
    if (!user) {
      if (type === 'magiclink') type = 'signup';
      if (type === 'recovery' || type === 'email_change_current' || type === 'email_change_new') {
        throw authError(404, 'user_not_found', 'User with this email not found');
      }
    }
    let address = email;
    if (type === 'signup' || type === 'invite') {
      if (user?.email_confirmed_at) throw errors.emailExists();
      if (!user) {
        if (input.type === 'signup' && !passwordHash) {
          throw authError(422, 'validation_failed', 'Signup requires a valid password');
        }
        user = await insertUser(tx, {
          email,
          passwordHash,
          confirmed: false,
          invited: type === 'invite',
          userMetadata: input.data ?? {},
        });
        if (!user) throw errors.emailExists();
      } else if (type === 'invite') {
        await tx.query('update auth.users set invited_at = now(), updated_at = now() where id = $1', [
          user.id,
        ]);
      } else if (input.data) {
        await updateUser(tx, user.id, { userMetadata: input.data });
      }
    }
    if (type === 'email_change_current' || type === 'email_change_new') {
      const newEmail = input.newEmail ? normalizeEmail(input.newEmail) : '';
      if (!newEmail) throw errors.validation('Unable to validate email address: invalid format');
      const taken = await tx.query('select 1 from auth.users where email = $1 and id <> $2', [
        newEmail,
        user!.id,
      ]);
      if (taken.rowCount) throw errors.emailExists();
      await tx.query(
        `update auth.users set email_change = $2, email_change_confirm_status = 0, updated_at = now()
         where id = $1`,
        [user!.id, newEmail],
      );
      if (type === 'email_change_new') address = newEmail;
    }
    const issued = await issueEmailAction(tx, deps.email, {
      action: type,
      userId: user!.id,
      address,
      redirectTo,
      // What this link asks for an account whose address is still unproven: the sign-up's
      // password and the sign-up's or invitation's data; a sign-in or recovery link, nothing.
      proposal:
        type === 'signup' || type === 'invite'
          ? { passwordHash, userMetadata: input.data ?? {} }
          : { passwordHash: null, userMetadata: null },
    });
    return {
      ...renderUser((await findUserById(tx, user!.id))!),
      action_link: issued.actionLink,
      email_otp: issued.otp,
      hashed_token: issued.linkToken,
      verification_type: type,
      redirect_to: issued.redirectTo,
    };
  });
}
