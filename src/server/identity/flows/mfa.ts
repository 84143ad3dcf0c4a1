// In charge of multi-factor authentication, GoTrue's /factors family: enrol (a TOTP secret, otpauth
// URI and QR code, or a WebAuthn factor whose credential its first challenge registers),
// challenge, verify (the session rises to aal2 with a fresh refresh token), unenrol (aal2 needed
// for a verified factor), the admin's list and delete, and the web app's recovery codes (shown
// once; one of them stands in for a code from the app). WebAuthn's ceremonies are in mfa-webauthn.ts.
import type { Queryable } from '../../db/pool.js';
import { recordAccountEvent } from '../audit.js';
import { withService, type Tx } from '../../db/transactions.js';
import type { AccessTokenClaims, AmrEntry } from '../access-tokens.js';
import { authError, errors } from '../errors.js';
import {
  hashRecoveryCode,
  newRecoveryCodes,
  openSecret,
  sealSecret,
  type MfaKeys,
} from '../mfa/secret-box.js';
import { matchingStep, newTotp } from '../mfa/totp.js';
import { countHits, limitsReached, type Limit } from '../rate-limit.js';
import { hashRefreshToken, newRefreshToken } from '../refresh-tokens.js';
import { findUserById, isBanned } from '../users.js';
import { requireLiveUser, tokenResponse, type IdentityDeps, type TokenResponse } from './context.js';
import {
  clearForPhoneEnrolment,
  createPhoneFactor,
  phoneChallenge,
  phoneFactorErrors,
  phoneVerify,
} from './mfa-phone.js';
import { webauthnChallenge, webauthnVerify, type WebAuthnAnswer } from './mfa-webauthn.js';
import { answerChallenge } from './mfa-answer.js';
import { normalizePhone } from '../phone-numbers.js';
import { readChannel } from '../sms/phone-codes.js';

export interface MfaSettings {
  keys: MfaKeys;
  /** the otpauth issuer when the client names none (the site's host, as GoTrue does) */
  defaultIssuer: string;
  /** seconds a challenge can be verified (MFA_CHALLENGE_EXPIRY) */
  challengeExpirySeconds: number;
  /** factors per user, verified or not (MFA_MAX_ENROLLED_FACTORS) */
  maxEnrolledFactors: number;
  /** wrong codes per factor (or recovery codes per user) per rate-limit window (RATE_LIMIT_MFA_FAILURES) */
  failuresPerFactor: number;
  /** an unverified factor older than this is removed at the next enrolment (GoTrue: 300 s) */
  unverifiedFactorExpirySeconds: number;
  /** factor_type webauthn may be enrolled (MFA_WEBAUTHN_ENROLL_ENABLED) and challenged or verified (_VERIFY_ENABLED) */
  webauthnEnroll: boolean;
  webauthnVerify: boolean;
  /** seconds between two challenges of one phone factor (MFA_PHONE_MAX_FREQUENCY) */
  phoneMaxFrequencySeconds: number;
}

/** The amr method of a session raised to aal2 by a recovery code. */
export const RECOVERY_CODE_METHOD = 'mfa/recovery_code';
/** The amr method of a session raised to aal2 by a WebAuthn factor (GoTrue's MFAWebAuthn). */
export const WEBAUTHN_METHOD = 'mfa/webauthn';

export interface FactorRow {
  id: string;
  user_id: string;
  friendly_name: string | null;
  factor_type: string;
  status: 'verified' | 'unverified';
  secret: string | null;
  /** a phone factor's number (E.164 digits) */
  phone?: string | null;
  web_authn_credential_id: Buffer | null;
  web_authn_public_key: Buffer | null;
  web_authn_sign_count: string | null;
  web_authn_transports: string[] | null;
  last_used_step: string | null;
  last_challenged_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** GoTrue's factor JSON (what /user's factors, the admin list and the admin delete return). */
export function renderFactor(
  f: Pick<
    FactorRow,
    | 'id'
    | 'friendly_name'
    | 'factor_type'
    | 'status'
    | 'created_at'
    | 'updated_at'
    | 'last_challenged_at'
    | 'phone'
  >,
): {
  id: string;
  friendly_name: string;
  factor_type: string;
  status: 'verified' | 'unverified';
  created_at: string;
  updated_at: string;
  last_challenged_at: string | null;
  /** a phone factor's number (E.164 digits), as GoTrue lists it */
  phone?: string;
} {
  return {
    id: f.id,
    friendly_name: f.friendly_name ?? '',
    factor_type: f.factor_type,
    status: f.status,
    created_at: new Date(f.created_at).toISOString(),
    updated_at: new Date(f.updated_at).toISOString(),
    last_challenged_at: f.last_challenged_at ? new Date(f.last_challenged_at).toISOString() : null,
    ...(f.phone ? { phone: f.phone } : {}),
  };
}

export const mfaErrors = {
  insufficientAal: (status: number, message: string) => authError(status, 'insufficient_aal', message),
  factorNotFound: () => authError(404, 'mfa_factor_not_found', 'Factor not found'),
  challengeNotFound: () =>
    authError(422, 'mfa_factor_not_found', 'MFA factor with the provided challenge ID not found'),
  ipMismatch: () => authError(422, 'mfa_ip_address_mismatch', 'Challenge and verify IP addresses mismatch.'),
  challengeExpired: (id: string) =>
    authError(
      422,
      'mfa_challenge_expired',
      `MFA challenge ${id} has expired, verify against another challenge or create a new challenge.`,
    ),
  invalidCode: () => authError(422, 'mfa_verification_failed', 'Invalid TOTP code entered'),
  invalidRecoveryCode: () => authError(422, 'mfa_verification_failed', 'Invalid recovery code entered'),
  noVerifiedFactor: () =>
    authError(422, 'mfa_factor_not_found', 'Recovery codes need a verified factor; enrol one first'),
  tooManyAttempts: (retryAfterSeconds: number) =>
    authError(
      429,
      'over_request_rate_limit',
      `Too many verification attempts; try again in ${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}`,
      { 'Retry-After': String(retryAfterSeconds) },
    ),
};

/** The session row's assurance level: raised at once by a verify, whatever older tokens still say. */
export async function sessionAal(db: Queryable, sessionId: string): Promise<string> {
  const result = await db.query<{ aal: string }>('select aal from auth.sessions where id = $1', [sessionId]);
  return result.rows[0]?.aal ?? 'aal1';
}

export async function ownedFactor(tx: Queryable, userId: string, factorId: string, lock = false) {
  const result = await tx.query<FactorRow>(
    `select * from auth.mfa_factors where id = $1 and user_id = $2${lock ? ' for update' : ''}`,
    [factorId, userId],
  );
  const factor = result.rows[0];
  if (!factor) throw mfaErrors.factorNotFound();
  return factor;
}

export interface EnrollInput {
  factorType: string;
  friendlyName?: string | undefined;
  issuer?: string | undefined;
  /** a phone factor's number, as sent */
  phone?: string | undefined;
}

/** POST /factors: a new unverified TOTP factor; the secret is shown now and never again. */
export async function enroll(deps: IdentityDeps, claims: AccessTokenClaims, input: EnrollInput) {
  let phone: string | null = null;
  if (input.factorType === 'phone') {
    // Phone factors need a way to send their codes (SMS_PROVIDER).
    if (!deps.phone.sender) throw phoneFactorErrors.enrollDisabled();
    if (!input.phone) throw errors.validation('Phone number required to enroll Phone factor');
    phone = normalizePhone(input.phone);
  }
  if (input.factorType === 'webauthn' && !deps.mfa.webauthnEnroll) {
    throw authError(422, 'mfa_webauthn_enroll_not_enabled', 'MFA enroll is disabled for WebAuthn');
  }
  if (input.factorType !== 'totp' && input.factorType !== 'webauthn' && input.factorType !== 'phone') {
    throw errors.validation('factor_type needs to be totp, phone or webauthn');
  }
  const settings = deps.mfa;
  const friendlyName = input.friendlyName ?? '';
  return withService(deps.pool, async (tx) => {
    const user = await requireLiveUser(tx, claims);
    // Serialise enrolments of one user, so the limits below cannot be raced past.
    await tx.query('select 1 from auth.users where id = $1 for update', [user.id]);
    await tx.query(
      `delete from auth.mfa_factors where user_id = $1 and status = 'unverified'
         and created_at < now() - make_interval(secs => $2)`,
      [user.id, settings.unverifiedFactorExpirySeconds],
    );
    if (phone) await clearForPhoneEnrolment(tx, user.id, phone);
    const existing = await tx.query<{ friendly_name: string | null; status: string }>(
      'select friendly_name, status from auth.mfa_factors where user_id = $1',
      [user.id],
    );
    if (friendlyName && existing.rows.some((f) => f.friendly_name === friendlyName)) {
      throw authError(
        422,
        'mfa_factor_name_conflict',
        `A factor with the friendly name "${friendlyName}" for this user already exists`,
      );
    }
    if (existing.rows.length >= settings.maxEnrolledFactors) {
      throw authError(
        422,
        'too_many_enrolled_mfa_factors',
        'Maximum number of verified factors reached, unenroll to continue',
      );
    }
    const hasVerified = existing.rows.some((f) => f.status === 'verified');
    if (hasVerified && (await sessionAal(tx, claims.session_id)) !== 'aal2') {
      throw mfaErrors.insufficientAal(403, 'AAL2 required to enroll a new factor');
    }
    if (phone) return createPhoneFactor(tx, user.id, phone, friendlyName);
    if (input.factorType === 'webauthn') {
      // Its credential comes with the first challenge and verification (mfa-webauthn.ts).
      const created = await tx.query<{ id: string }>(
        `insert into auth.mfa_factors (user_id, friendly_name, factor_type) values ($1, $2, 'webauthn') returning id`,
        [user.id, friendlyName || null],
      );
      await recordAccountEvent(tx, {
        action: 'factor_in_progress',
        userId: user.id,
        target: { type: 'factor', id: created.rows[0]!.id },
        details: { factor_type: 'webauthn' },
      });
      return { id: created.rows[0]!.id, type: 'webauthn', friendly_name: friendlyName };
    }
    const issuer = input.issuer || settings.defaultIssuer;
    const totp = await newTotp(issuer, user.email ?? user.phone ?? user.id);
    const id = crypto.randomUUID();
    await tx.query(
      `insert into auth.mfa_factors (id, user_id, friendly_name, factor_type, secret)
       values ($1, $2, $3, 'totp', $4)`,
      [id, user.id, friendlyName || null, sealSecret(settings.keys, id, totp.secret)],
    );
    await recordAccountEvent(tx, {
      action: 'factor_in_progress',
      userId: user.id,
      target: { type: 'factor', id },
      details: { factor_type: 'totp' },
    });
    return {
      id,
      type: 'totp',
      friendly_name: friendlyName,
      totp: { qr_code: totp.qrCode, secret: totp.secret, uri: totp.uri },
    };
  });
}

/** POST /factors/{id}/challenge: a challenge to verify within the expiry, from the same address. */
export async function challenge(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  factorId: string,
  ip: string | null,
  channel?: string | null,
) {
  return withService(deps.pool, async (tx) => {
    await requireLiveUser(tx, claims);
    const factor = await ownedFactor(tx, claims.sub, factorId);
    if (factor.factor_type === 'phone')
      return phoneChallenge(deps, tx, factor, ip, readChannel(deps.phone, channel));
    if (channel) throw errors.validation('channel is only for phone factors');
    if (factor.factor_type === 'webauthn') return webauthnChallenge(deps, tx, factor, ip);
    const created = await tx.query<{ id: string; created_at: Date }>(
      'insert into auth.mfa_challenges (factor_id, ip_address) values ($1, $2::inet) returning id, created_at',
      [factor.id, ip],
    );
    await tx.query('update auth.mfa_factors set last_challenged_at = now() where id = $1', [factor.id]);
    const row = created.rows[0]!;
    return {
      id: row.id,
      type: 'totp',
      expires_at: Math.floor(new Date(row.created_at).getTime() / 1000) + deps.mfa.challengeExpirySeconds,
    };
  });
}

export function failureLimit(deps: IdentityDeps, bucket: string): Limit[] {
  return [
    {
      bucket,
      max: deps.mfa.failuresPerFactor,
      windowSeconds: deps.settings.rateLimits.windowSeconds,
    },
  ];
}

export interface VerifyInput {
  challengeId: string;
  code: string;
  ip: string | null;
  /** a WebAuthn factor's answer: the ceremony (create or request) and the credential's response */
  webauthn?: WebAuthnAnswer | undefined;
}

export type Checked = { ok: true; response: TokenResponse } | { ok: false; error: Error };

/** POST /factors/{id}/verify: a right, unused code raises the session to aal2. */
export async function verify(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  factorId: string,
  input: VerifyInput,
): Promise<TokenResponse> {
  const kind = await deps.pool.query<{ factor_type: string }>(
    'select factor_type from auth.mfa_factors where id = $1 and user_id = $2',
    [factorId, claims.sub],
  );
  if (kind.rows[0]?.factor_type === 'webauthn') return webauthnVerify(deps, claims, factorId, input);
  if (!input.code) throw errors.validation('Code needs to be non-empty');
  if (kind.rows[0]?.factor_type === 'phone') return phoneVerify(deps, claims, factorId, input);
  return answerChallenge(deps, claims, factorId, input, {
    factorType: 'totp',
    method: 'totp',
    columns: [],
    check: async (tx, factor, challenge) => {
      const secret = openSecret(deps.mfa.keys, factor.id, factor.secret ?? '');
      const step = matchingStep(secret, input.code);
      const lastStep = factor.last_used_step === null ? null : Number(factor.last_used_step);
      // A code's time step is accepted once: an earlier or the same step again is a replay.
      if (step === null || (lastStep !== null && step <= lastStep)) {
        return { result: 'refused', error: mfaErrors.invalidCode() };
      }
      await tx.query('update auth.mfa_challenges set verified_at = now() where id = $1', [challenge.id]);
      await tx.query(
        `update auth.mfa_factors set status = 'verified', last_used_step = $2, updated_at = now() where id = $1`,
        [factor.id, step],
      );
      return { result: 'verified' };
    },
  });
}

/**
 * The session behind `claims` at aal2: the method joins its amr (most recent first), every
 * refresh token it had is revoked and a fresh one issued (an aal1 token cannot yield aal2 tokens),
 * and the user's other sessions still at aal1 end (GoTrue's rule).
 */
export async function raiseSession(
  deps: IdentityDeps,
  tx: Tx,
  claims: AccessTokenClaims,
  method: string,
  factorId: string | null,
): Promise<TokenResponse> {
  const now = Math.floor(Date.now() / 1000);
  const current = await tx.query<{ amr: AmrEntry[] }>(
    'select amr from auth.sessions where id = $1 and user_id = $2 for update',
    [claims.session_id, claims.sub],
  );
  if (!current.rows[0]) throw errors.sessionNotFound();
  const amr = [{ method, timestamp: now }, ...current.rows[0].amr.filter((e) => e.method !== method)];
  amr.sort((a, b) => b.timestamp - a.timestamp);
  const refreshToken = newRefreshToken(claims.session_id);
  // The aal1 token becomes the parent of a fresh random one: it cannot yield the new token (not its
  // HMAC child), so presenting it, or any older token, is reuse and ends the session.
  await tx.query(
    `with raised as (
       update auth.sessions set aal = 'aal2', amr = $3, factor_id = $4, updated_at = now(),
         refresh_parent_hash = refresh_token_hash, refresh_token_hash = $5, refresh_rotated_at = now()
       where id = $1 and user_id = $2
     )
     delete from auth.sessions where user_id = $2 and id <> $1 and aal < 'aal2'`,
    [claims.session_id, claims.sub, JSON.stringify(amr), factorId, hashRefreshToken(refreshToken)],
  );
  const user = await findUserById(tx, claims.sub);
  if (!user) throw errors.userNotFoundForToken();
  if (isBanned(user)) throw errors.bannedCaller();
  return tokenResponse(deps, user, {
    sessionId: claims.session_id,
    userId: claims.sub,
    refreshToken,
    aal: 'aal2',
    amr,
  });
}

/**
 * Removes a factor; sessions it raised fall back to aal1. Without any verified factor left, the
 * recovery codes go too and no session of the user stays at aal2.
 */
async function removeFactor(tx: Tx, factor: FactorRow): Promise<void> {
  await tx.query('delete from auth.mfa_factors where id = $1', [factor.id]);
  const left = await tx.query(
    `select 1 from auth.mfa_factors where user_id = $1 and status = 'verified' limit 1`,
    [factor.user_id],
  );
  const noneLeft = (left.rowCount ?? 0) === 0;
  await tx.query(
    `update auth.sessions set aal = 'aal1', factor_id = null, updated_at = now(),
       amr = coalesce((select jsonb_agg(e) from jsonb_array_elements(amr) e
                       where e->>'method' not in ('totp', $3, $5)), '[]')
     where user_id = $1 and aal = 'aal2' and ($2 or factor_id = $4)`,
    [factor.user_id, noneLeft, RECOVERY_CODE_METHOD, factor.id, WEBAUTHN_METHOD],
  );
  if (noneLeft) await tx.query('delete from auth.mfa_recovery_codes where user_id = $1', [factor.user_id]);
}

/** DELETE /factors/{id}: a verified factor goes only from an aal2 session. */
export async function unenroll(deps: IdentityDeps, claims: AccessTokenClaims, factorId: string) {
  return withService(deps.pool, async (tx) => {
    await requireLiveUser(tx, claims);
    const factor = await ownedFactor(tx, claims.sub, factorId, true);
    if (factor.status === 'verified' && (await sessionAal(tx, claims.session_id)) !== 'aal2') {
      throw mfaErrors.insufficientAal(422, 'AAL2 required to unenroll verified factor');
    }
    await removeFactor(tx, factor);
    await recordAccountEvent(tx, {
      action: 'factor_unenrolled',
      userId: claims.sub,
      target: { type: 'factor', id: factor.id },
    });
    return { id: factor.id };
  });
}

/** The factors of a user, oldest first, as GoTrue renders them. */
export async function listFactors(db: Queryable, userId: string) {
  const result = await db.query<FactorRow>(
    'select * from auth.mfa_factors where user_id = $1 order by created_at, id',
    [userId],
  );
  return result.rows.map(renderFactor);
}

/** GET /admin/users/{id}/factors */
export async function adminListFactors(deps: IdentityDeps, userId: string) {
  return withService(deps.pool, async (tx) => {
    if (!(await findUserById(tx, userId))) throw errors.userNotFound();
    return listFactors(tx, userId);
  });
}

/** DELETE /admin/users/{id}/factors/{factorId}: the deleted factor. */
export async function adminDeleteFactor(deps: IdentityDeps, userId: string, factorId: string) {
  return withService(deps.pool, async (tx) => {
    if (!(await findUserById(tx, userId))) throw errors.userNotFound();
    const factor = await ownedFactor(tx, userId, factorId, true);
    await removeFactor(tx, factor);
    await recordAccountEvent(tx, {
      action: 'factor_deleted',
      userId,
      actor: { type: 'service' },
      target: { type: 'factor', id: factor.id },
    });
    return renderFactor(factor);
  });
}

/** New recovery codes for an aal2 session with a verified factor; the old ones stop working. */
export async function regenerateRecoveryCodes(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
): Promise<string[]> {
  return withService(deps.pool, async (tx) => {
    const user = await requireLiveUser(tx, claims);
    const verified = await tx.query(
      `select 1 from auth.mfa_factors where user_id = $1 and status = 'verified' limit 1`,
      [user.id],
    );
    if ((verified.rowCount ?? 0) === 0) throw mfaErrors.noVerifiedFactor();
    if ((await sessionAal(tx, claims.session_id)) !== 'aal2') {
      throw mfaErrors.insufficientAal(403, 'AAL2 required to create recovery codes');
    }
    const codes = newRecoveryCodes();
    await tx.query('delete from auth.mfa_recovery_codes where user_id = $1', [user.id]);
    await tx.query(
      `insert into auth.mfa_recovery_codes (user_id, code_hash) select $1, h from unnest($2::bytea[]) h`,
      [user.id, codes.map((code) => hashRecoveryCode(deps.mfa.keys, user.id, code))],
    );
    return codes;
  });
}

/** Where a signed-in session stands for the web app (sessionStanding). */
export type SessionStanding = 'active' | 'second-step-due' | 'ended';

/**
 * Whether the session behind a verified access token may still act, in one round trip: ended when
 * the database's own rule says the account or the session no longer stands (signed out, banned,
 * deleted: internal.caller_standing, migration 0045), the second step due when the session is at
 * aal1 but the user has a verified factor, else active.
 */
export async function sessionStanding(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
): Promise<SessionStanding> {
  const result = await deps.pool.query<{ standing: string; factor: boolean }>(
    `with claims as materialized (select set_config('request.jwt.claims', $1, true))
     select internal.caller_standing() as standing,
            $3::text <> 'aal2' and exists (
              select 1 from auth.mfa_factors where user_id = $2 and status = 'verified') as factor
     from claims`,
    [JSON.stringify({ sub: claims.sub, session_id: claims.session_id }), claims.sub, claims.aal],
  );
  const row = result.rows[0];
  if (!row || row.standing !== 'active') return 'ended';
  return row.factor ? 'second-step-due' : 'active';
}

/** The user's verified factors and unused recovery codes, for the web app's pages. */
export async function factorsOf(deps: IdentityDeps, userId: string) {
  const factors = await listFactors(deps.pool, userId);
  return { factors, recoveryCodesLeft: await recoveryCodesLeft(deps, userId) };
}

/** Recovery codes the user has not used yet. */
export async function recoveryCodesLeft(deps: IdentityDeps, userId: string): Promise<number> {
  const result = await deps.pool.query<{ left: number }>(
    'select count(*)::int as left from auth.mfa_recovery_codes where user_id = $1 and used_at is null',
    [userId],
  );
  return result.rows[0]?.left ?? 0;
}

/** The second step with a recovery code instead of the app: used once, raises the session to aal2. */
export async function verifyRecoveryCode(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  code: string,
): Promise<TokenResponse> {
  if (!code.trim()) throw errors.validation('Code needs to be non-empty');
  const limit = failureLimit(deps, `mfa:recovery:${claims.sub}`);
  const outcome = await withService(deps.pool, async (tx): Promise<Checked> => {
    await requireLiveUser(tx, claims);
    await tx.query('select 1 from auth.users where id = $1 for update', [claims.sub]);
    const wait = await limitsReached(tx, limit);
    if (wait > 0) throw mfaErrors.tooManyAttempts(wait);
    const used = await tx.query(
      `update auth.mfa_recovery_codes set used_at = now()
       where user_id = $1 and code_hash = $2 and used_at is null
         and exists (select 1 from auth.mfa_factors f where f.user_id = $1 and f.status = 'verified')
       returning id`,
      [claims.sub, hashRecoveryCode(deps.mfa.keys, claims.sub, code)],
    );
    if ((used.rowCount ?? 0) === 0) {
      await countHits(tx, limit);
      return { ok: false, error: mfaErrors.invalidRecoveryCode() };
    }
    return { ok: true, response: await raiseSession(deps, tx, claims, RECOVERY_CODE_METHOD, null) };
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.response;
}
