// In charge of the signed-in user's own account: GET /user, PUT /user and POST /logout.
import { withService } from '../../db/transactions.js';
import type { AccessTokenClaims } from '../access-tokens.js';
import { errors } from '../errors.js';
import { hashPassword, verifyPassword } from '../passwords.js';
import { logout, type LogoutScope } from '../sessions.js';
import { findUserById, normalizeEmail, renderUser, updateUser, type UserChanges } from '../users.js';
import { checkPasswordStrength, requireLiveUser, type IdentityDeps } from './context.js';

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
  data?: Record<string, unknown>;
}

export async function updateCurrentUser(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  input: UserUpdate,
): Promise<Record<string, unknown>> {
  if (input.password !== undefined) checkPasswordStrength(deps.settings, input.password);
  const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password);
  return withService(deps.pool, async (tx) => {
    const user = await requireLiveUser(tx, claims);
    if (input.password !== undefined && user.encrypted_password) {
      if (await verifyPassword(user.encrypted_password, input.password)) throw errors.samePassword();
    }
    if (
      input.email !== undefined &&
      normalizeEmail(input.email) !== user.email &&
      !deps.settings.autoconfirm
    ) {
      throw errors.validation('Changing the e-mail address needs e-mail confirmation, which is not enabled');
    }
    const changes: UserChanges = {};
    if (input.email !== undefined) changes.email = input.email;
    if (passwordHash !== undefined) changes.passwordHash = passwordHash;
    if (input.data !== undefined) changes.userMetadata = input.data;
    if (!(await updateUser(tx, user.id, changes))) throw errors.emailExists();
    // A new password ends every other session: whoever knew the old one is signed out.
    if (passwordHash !== undefined) await logout(tx, user.id, claims.session_id, 'others');
    return renderUser((await findUserById(tx, user.id))!);
  });
}

export async function signOut(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  scope: LogoutScope,
): Promise<void> {
  await withService(deps.pool, (tx) => logout(tx, claims.sub, claims.session_id, scope));
}
