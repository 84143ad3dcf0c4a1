// In charge of the identity operations behind /auth/v1: password and refresh grants, sign-up,
// the signed-in user's own account, sign-out, and the service-role administration of users.
// Framework-free: inputs are validated values, outputs are plain objects or HttpErrors.
import type { Pool, Queryable } from '../db/pool.js';
import { withService } from '../db/transactions.js';
import { signAccessToken, type AccessTokenClaims, type TokenSigner } from './access-tokens.js';
import { authError, errors } from './errors.js';
import { hashPassword, verifyDecoy, verifyPassword } from './passwords.js';
import { enforceLimits } from './rate-limit.js';
import { beginPasswordSignIn, passwordWasRight } from './sign-in-backoff.js';
import type { RefreshTokenKey } from './refresh-tokens.js';
import {
  logout,
  openSession,
  rotateRefreshToken,
  sessionExists,
  type LogoutScope,
  type SessionContext,
  type SessionRef,
} from './sessions.js';
import {
  deleteUser,
  findUserById,
  insertUser,
  isBanned,
  listUsers,
  normalizeEmail,
  renderUser,
  updateUser,
  type UserChanges,
  type UserWithIdentities,
} from './users.js';
import type { RateLimits } from '../config.js';

export interface IdentitySettings {
  autoconfirm: boolean;
  disableSignup: boolean;
  minPasswordLength: number;
  refreshTokenTtlSeconds: number;
  refreshTokenReuseIntervalSeconds: number;
  rateLimits: RateLimits;
}

export interface IdentityDeps {
  pool: Pool;
  signer: TokenSigner;
  refreshKey: RefreshTokenKey;
  settings: IdentitySettings;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  expires_at: number;
  refresh_token: string;
  user: Record<string, unknown>;
}

export interface RequestContext extends SessionContext {
  /** the client address used for per-address limits */
  ip: string | null;
}

export class IdentityService {
  constructor(private readonly deps: IdentityDeps) {}

  private get pool() {
    return this.deps.pool;
  }

  private async tokenResponse(user: UserWithIdentities, session: SessionRef): Promise<TokenResponse> {
    const { token, expiresAt } = await signAccessToken(this.deps.signer, {
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
    });
    return {
      access_token: token,
      token_type: 'bearer',
      expires_in: this.deps.signer.ttlSeconds,
      expires_at: expiresAt,
      refresh_token: session.refreshToken,
      user: renderUser(user),
    };
  }

  private checkPasswordStrength(password: string): void {
    if ([...password].length < this.deps.settings.minPasswordLength) {
      throw errors.weakPassword(this.deps.settings.minPasswordLength);
    }
  }

  async passwordGrant(email: string, password: string, context: RequestContext): Promise<TokenResponse> {
    const normalized = normalizeEmail(email);
    // One round trip: the attempt is counted (a failure until the password proves right) and the
    // user looked up, unless this address must wait for this e-mail.
    const attempt = await beginPasswordSignIn(
      this.pool,
      normalized,
      context.ip,
      this.deps.settings.rateLimits,
    );
    if (attempt.kind === 'wait') throw errors.signInWait(attempt.retryAfterSeconds);
    const { user } = attempt;
    // Unknown user and wrong password take the same time and get the same answer.
    const valid = user?.encrypted_password
      ? await verifyPassword(user.encrypted_password, password)
      : await verifyDecoy(password);
    if (!user || !valid) throw errors.invalidCredentials();
    if (isBanned(user) || !user.email_confirmed_at) {
      await passwordWasRight(this.pool, normalized, context.ip);
      throw isBanned(user) ? errors.userBanned() : errors.emailNotConfirmed();
    }
    const session = await openSession(this.pool, user.id, 'password', context, normalized);
    return this.tokenResponse({ ...user, last_sign_in_at: new Date() }, session);
  }

  async refreshGrant(refreshToken: string): Promise<TokenResponse> {
    const limits = this.deps.settings.rateLimits;
    const outcome = await withService(this.pool, async (tx) => {
      const rotation = await rotateRefreshToken(
        tx,
        this.deps.refreshKey,
        refreshToken,
        this.deps.settings.refreshTokenTtlSeconds,
        this.deps.settings.refreshTokenReuseIntervalSeconds,
      );
      if (rotation.kind === 'reuse_detected') return null; // commit the revocation, then refuse
      const { session } = rotation;
      // Counted inside the session's lock: an over-limit attempt rolls back its own rotation.
      await enforceLimits(tx, [
        {
          bucket: `refresh:session:${session.sessionId}`,
          max: limits.refreshPerSession,
          windowSeconds: limits.windowSeconds,
        },
      ]);
      const user = await findUserById(tx, session.userId);
      if (!user) throw errors.refreshNotFound();
      if (isBanned(user)) throw errors.userBanned();
      return this.tokenResponse(user, session);
    });
    if (!outcome) throw errors.refreshAlreadyUsed();
    return outcome;
  }

  async signUp(
    input: { email: string; password: string; data?: Record<string, unknown> },
    context: RequestContext,
  ): Promise<TokenResponse | Record<string, unknown>> {
    const settings = this.deps.settings;
    if (settings.disableSignup) throw errors.signupDisabled();
    this.checkPasswordStrength(input.password);
    if (context.ip) {
      await enforceLimits(this.pool, [
        {
          bucket: `signup:ip:${context.ip}`,
          max: settings.rateLimits.signUpPerAddress,
          windowSeconds: settings.rateLimits.windowSeconds,
        },
      ]);
    }
    const passwordHash = await hashPassword(input.password);
    return withService(this.pool, async (tx) => {
      const user = await insertUser(tx, {
        email: input.email,
        passwordHash,
        confirmed: settings.autoconfirm,
        userMetadata: input.data ?? {},
      });
      if (!user) {
        if (settings.autoconfirm) throw errors.userAlreadyExists();
        // Without autoconfirm GoTrue answers with an obfuscated user so sign-up does not reveal
        // who is registered; clients recognise it by the empty identities list.
        return obfuscatedUser(input.email);
      }
      if (!settings.autoconfirm) return renderUser(user);
      const session = await openSession(tx, user.id, 'password', context);
      return this.tokenResponse(user, session);
    });
  }

  /** The signed-in user, provided the session behind the token still exists. */
  async currentUser(claims: AccessTokenClaims): Promise<Record<string, unknown>> {
    return renderUser(await this.requireLiveUser(this.pool, claims));
  }

  private async requireLiveUser(tx: Queryable, claims: AccessTokenClaims): Promise<UserWithIdentities> {
    const user = await findUserById(tx, claims.sub);
    if (!user) throw errors.userNotFoundForToken();
    if (!(await sessionExists(tx, claims.session_id, claims.sub))) throw errors.sessionNotFound();
    if (isBanned(user)) throw errors.userBanned();
    return user;
  }

  async updateCurrentUser(
    claims: AccessTokenClaims,
    input: { email?: string; password?: string; data?: Record<string, unknown> },
  ): Promise<Record<string, unknown>> {
    if (input.password !== undefined) this.checkPasswordStrength(input.password);
    const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password);
    return withService(this.pool, async (tx) => {
      const user = await this.requireLiveUser(tx, claims);
      if (input.password !== undefined && user.encrypted_password) {
        if (await verifyPassword(user.encrypted_password, input.password)) throw errors.samePassword();
      }
      if (
        input.email !== undefined &&
        normalizeEmail(input.email) !== user.email &&
        !this.deps.settings.autoconfirm
      ) {
        throw errors.validation(
          'Changing the e-mail address needs e-mail confirmation, which is not enabled',
        );
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

  async signOut(claims: AccessTokenClaims, scope: LogoutScope): Promise<void> {
    await withService(this.pool, (tx) => logout(tx, claims.sub, claims.session_id, scope));
  }

  // ---- administration (service role only; the route checks the caller) ----

  async adminCreateUser(input: {
    email: string;
    password?: string;
    emailConfirm?: boolean;
    userMetadata?: Record<string, unknown>;
    appMetadata?: Record<string, unknown>;
    invited?: boolean;
  }): Promise<UserWithIdentities> {
    if (input.password !== undefined) this.checkPasswordStrength(input.password);
    const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
    return withService(this.pool, async (tx) => {
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

  async adminGetUser(id: string): Promise<UserWithIdentities> {
    const user = await withService(this.pool, (tx) => findUserById(tx, id));
    if (!user) throw errors.userNotFound();
    return user;
  }

  async adminListUsers(page: number, perPage: number) {
    return withService(this.pool, (tx) => listUsers(tx, page, perPage));
  }

  async adminUpdateUser(
    id: string,
    input: {
      email?: string;
      password?: string;
      emailConfirm?: boolean;
      userMetadata?: Record<string, unknown>;
      appMetadata?: Record<string, unknown>;
      bannedUntil?: Date | null;
    },
  ): Promise<UserWithIdentities> {
    if (input.password !== undefined) this.checkPasswordStrength(input.password);
    const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password);
    return withService(this.pool, async (tx) => {
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

  async adminDeleteUser(id: string): Promise<void> {
    let deleted: boolean;
    try {
      deleted = await withService(this.pool, (tx) => deleteUser(tx, id));
    } catch (error) {
      // The database refuses to leave a workspace with members but no owner (P0001).
      const e = error as { code?: string; message?: string };
      if (e.code === 'P0001') throw authError(409, 'conflict', e.message ?? 'The user cannot be deleted yet');
      throw error;
    }
    if (!deleted) throw errors.userNotFound();
  }
}

function obfuscatedUser(email: string): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    id: crypto.randomUUID(),
    aud: 'authenticated',
    role: 'authenticated',
    email: normalizeEmail(email),
    phone: '',
    confirmation_sent_at: now,
    app_metadata: { provider: 'email', providers: ['email'] },
    user_metadata: {},
    identities: [],
    created_at: now,
    updated_at: now,
    is_anonymous: false,
  };
}
