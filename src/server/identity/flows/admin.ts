// In charge of the service-role administration of users (/admin/users, /invite): create, read,
// list, change, ban and delete. The route has already checked that the caller is an administrator.
import { withService } from '../../db/transactions.js';
import { authError, errors } from '../errors.js';
import { hashPassword } from '../passwords.js';
import {
  deleteUser,
  findUserById,
  insertUser,
  listUsers,
  updateUser,
  type UserChanges,
  type UserWithIdentities,
} from '../users.js';
import { checkPasswordStrength, type IdentityDeps } from './context.js';

export interface AdminNewUser {
  email: string;
  password?: string;
  emailConfirm?: boolean;
  userMetadata?: Record<string, unknown>;
  appMetadata?: Record<string, unknown>;
  invited?: boolean;
}

export async function adminCreateUser(deps: IdentityDeps, input: AdminNewUser): Promise<UserWithIdentities> {
  if (input.password !== undefined) checkPasswordStrength(deps.settings, input.password);
  const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
  return withService(deps.pool, async (tx) => {
    const user = await insertUser(tx, {
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

export async function adminGetUser(deps: IdentityDeps, id: string): Promise<UserWithIdentities> {
  const user = await withService(deps.pool, (tx) => findUserById(tx, id));
  if (!user) throw errors.userNotFound();
  return user;
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
  const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password);
  return withService(deps.pool, async (tx) => {
    if (!(await findUserById(tx, id))) throw errors.userNotFound();
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
    return (await findUserById(tx, id))!;
  });
}

export async function adminDeleteUser(deps: IdentityDeps, id: string): Promise<void> {
  let deleted: boolean;
  try {
    deleted = await withService(deps.pool, (tx) => deleteUser(tx, id));
  } catch (error) {
    // The database refuses to leave a workspace with members but no owner (P0001).
    const e = error as { code?: string; message?: string };
    if (e.code === 'P0001') throw authError(409, 'conflict', e.message ?? 'The user cannot be deleted yet');
    throw error;
  }
  if (!deleted) throw errors.userNotFound();
}
