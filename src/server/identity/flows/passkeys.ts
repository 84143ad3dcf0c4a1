// In charge of passkeys, GoTrue's /passkeys family: registering one for the signed-in user
// (options, then the authenticator's response), signing in with one (options for any
// discoverable credential, then the assertion, which opens a session with amr `passkey`), and
// listing, renaming and deleting them (the user's own, or any user's through the admin API).
// Challenges live in auth.webauthn_challenges and are used once: verification deletes the row in
// the transaction that reads it, and a refusal still commits that deletion.
import type { Queryable } from '../../db/pool.js';
import { recordAccountEvent } from '../audit.js';
import { withService, type Tx } from '../../db/transactions.js';
import type { AccessTokenClaims } from '../access-tokens.js';
import { authError, errors } from '../errors.js';
import { enforceLimits } from '../rate-limit.js';
import { openSession } from '../sessions.js';
import { findUserById, isBanned } from '../users.js';
import {
  authenticationOptions,
  authenticationResponse,
  registrationOptions,
  registrationResponse,
  userIdOfHandle,
  verifyAssertion,
  verifyRegistration,
  type RelyingParty,
} from '../webauthn/ceremonies.js';
import {
  requireLiveUser,
  tokenResponse,
  type IdentityDeps,
  type RequestContext,
  type TokenResponse,
} from './context.js';
import { sessionAal } from './mfa.js';

export interface PasskeySettings {
  enabled: boolean;
  rp: RelyingParty;
  maxPerUser: number;
  /** sign-in ceremonies started per client address per rate-limit window */
  ceremoniesPerAddress: number;
}

/** The amr method of a session opened with a passkey (GoTrue's PasskeyLogin). */
export const PASSKEY_METHOD = 'passkey';

/** GoTrue's words and codes for passkey refusals (apierrors, passkey_*.go). */
export const passkeyErrors = {
  disabled: () => authError(404, 'passkey_disabled', 'Passkeys are disabled'),
  challengeNotFound: () =>
    authError(400, 'webauthn_challenge_not_found', 'Challenge not found or already used'),
  challengeExpired: () => authError(400, 'webauthn_challenge_expired', 'Challenge has expired'),
  invalidResponse: () => authError(400, 'webauthn_verification_failed', 'Invalid credential response'),
  verificationFailed: () => authError(400, 'webauthn_verification_failed', 'Credential verification failed'),
  credentialExists: () =>
    authError(422, 'webauthn_credential_exists', 'This credential is already registered'),
  tooMany: () => authError(422, 'too_many_passkeys', 'Maximum number of passkeys reached'),
  notFound: () => authError(404, 'validation_failed', 'Passkey not found'),
  insufficientAal: () =>
    authError(403, 'insufficient_aal', 'AAL2 session is required to manage passkeys when MFA is enabled'),
  emailNotConfirmed: () => authError(403, 'email_not_confirmed', 'Email not confirmed'),
  banned: () => authError(403, 'user_banned', 'User is banned'),
};

interface PasskeyRow {
  id: string;
  user_id: string;
  credential_id: Buffer;
  public_key: Buffer;
  sign_count: string;
  transports: string[];
  friendly_name: string;
  created_at: Date;
  last_used_at: Date | null;
}

/** GoTrue's PasskeyListItem: friendly_name and last_used_at are left out when empty. */
export function renderPasskey(p: Pick<PasskeyRow, 'id' | 'friendly_name' | 'created_at' | 'last_used_at'>) {
  return {
    id: p.id,
    ...(p.friendly_name ? { friendly_name: p.friendly_name } : {}),
    created_at: new Date(p.created_at).toISOString(),
    ...(p.last_used_at ? { last_used_at: new Date(p.last_used_at).toISOString() } : {}),
  };
}

function requireEnabled(deps: IdentityDeps): PasskeySettings {
  if (!deps.passkeys.enabled) throw passkeyErrors.disabled();
  return deps.passkeys;
}

/** GoTrue's rule: with a verified second factor, adding or removing a passkey needs an aal2 session. */
async function requireManagementAal(tx: Queryable, claims: AccessTokenClaims): Promise<void> {
  const factor = await tx.query(
    `select 1 from auth.mfa_factors where user_id = $1 and status = 'verified' limit 1`,
    [claims.sub],
  );
  if ((factor.rowCount ?? 0) > 0 && (await sessionAal(tx, claims.session_id)) !== 'aal2') {
    throw passkeyErrors.insufficientAal();
  }
}

/** Expired challenges nobody answered, a bounded batch at a time, as new ones are made. */
async function sweepChallenges(tx: Queryable): Promise<void> {
  await tx.query(
    `delete from auth.webauthn_challenges where id in (
       select id from auth.webauthn_challenges where expires_at < now() - interval '1 hour' limit 100)`,
  );
}

async function storeChallenge(
  tx: Queryable,
  settings: PasskeySettings,
  userId: string | null,
  type: 'registration' | 'authentication',
  challenge: string,
): Promise<{ id: string; expiresAt: number }> {
  await sweepChallenges(tx);
  const stored = await tx.query<{ id: string; expires_at: Date }>(
    `insert into auth.webauthn_challenges (user_id, challenge_type, challenge, expires_at)
     values ($1, $2, $3, now() + make_interval(secs => $4)) returning id, expires_at`,
    [userId, type, challenge, settings.rp.challengeExpirySeconds],
  );
  const row = stored.rows[0]!;
  return { id: row.id, expiresAt: Math.floor(new Date(row.expires_at).getTime() / 1000) };
}

/**
 * Takes a challenge out for good, whatever the verification then says: GoTrue's
 * ConsumeWebAuthnChallengeByID. A registration's challenge is only its own user's.
 */
async function consumeChallenge(
  tx: Queryable,
  id: string,
  type: 'registration' | 'authentication',
  userId: string | null,
): Promise<{ challenge: string; expired: boolean }> {
  const consumed = await tx.query<{ challenge: string; expired: boolean }>(
    `delete from auth.webauthn_challenges
     where id = $1 and challenge_type = $2 and user_id is not distinct from $3
     returning challenge, expires_at < now() as expired`,
    [id, type, userId],
  );
  const row = consumed.rows[0];
  if (!row) throw passkeyErrors.challengeNotFound();
  return row;
}

export interface CeremonyInput {
  challengeId: string;
  credential: unknown;
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: Error };

/** Runs `work` in one transaction that commits even when it refuses, so a used challenge stays used. */
async function committingRefusals<T>(deps: IdentityDeps, work: (tx: Tx) => Promise<Outcome<T>>): Promise<T> {
  // What is thrown rather than returned (nothing consumed yet) rolls back, which changes nothing.
  const outcome = await withService(deps.pool, work);
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/** POST /passkeys/registration/options */
export async function registrationStart(deps: IdentityDeps, claims: AccessTokenClaims) {
  const settings = requireEnabled(deps);
  return withService(deps.pool, async (tx) => {
    const user = await requireLiveUser(tx, claims);
    await requireManagementAal(tx, claims);
    const existing = await tx.query<{ credential_id: Buffer; transports: string[] }>(
      'select credential_id, transports from auth.webauthn_credentials where user_id = $1 order by created_at',
      [user.id],
    );
    if (existing.rows.length >= settings.maxPerUser) throw passkeyErrors.tooMany();
    const name = user.email ?? user.phone ?? user.id;
    const displayName =
      typeof user.raw_user_meta_data.name === 'string' && user.raw_user_meta_data.name
        ? user.raw_user_meta_data.name
        : name;
    const options = await registrationOptions(settings.rp, {
      userId: user.id,
      userName: name,
      displayName,
      exclude: existing.rows.map((c) => ({
        id: c.credential_id.toString('base64url'),
        transports: c.transports,
      })),
      discoverable: true,
    });
    const stored = await storeChallenge(tx, settings, user.id, 'registration', options.challenge);
    return { challenge_id: stored.id, options, expires_at: stored.expiresAt };
  });
}

/** POST /passkeys/registration/verify: the new passkey's id, name and creation time. */
export async function registrationFinish(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  input: CeremonyInput,
) {
  const settings = requireEnabled(deps);
  return committingRefusals(deps, async (tx) => {
    const user = await requireLiveUser(tx, claims);
    await requireManagementAal(tx, claims);
    // One registration of a user at a time, so the limit below cannot be raced past.
    await tx.query('select 1 from auth.users where id = $1 for update', [user.id]);
    const { challenge, expired } = await consumeChallenge(tx, input.challengeId, 'registration', user.id);
    if (expired) return { ok: false, error: passkeyErrors.challengeExpired() };
    const parsed = registrationResponse.safeParse(input.credential);
    if (!parsed.success) return { ok: false, error: passkeyErrors.invalidResponse() };
    const credential = await verifyRegistration(settings.rp, parsed.data, challenge);
    if (!credential) return { ok: false, error: passkeyErrors.verificationFailed() };
    const count = await tx.query<{ n: number }>(
      'select count(*)::int as n from auth.webauthn_credentials where user_id = $1',
      [user.id],
    );
    if ((count.rows[0]?.n ?? 0) >= settings.maxPerUser) return { ok: false, error: passkeyErrors.tooMany() };
    const inserted = await tx.query<PasskeyRow>(
      `insert into auth.webauthn_credentials (user_id, credential_id, public_key, attestation_type, aaguid,
         sign_count, transports, backup_eligible, backed_up, friendly_name)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'Passkey')
       on conflict (credential_id) do nothing
       returning id, friendly_name, created_at, last_used_at`,
      [
        user.id,
        credential.credentialId,
        Buffer.from(credential.publicKey),
        credential.attestationType,
        credential.aaguid,
        credential.signCount,
        JSON.stringify(credential.transports),
        credential.backupEligible,
        credential.backedUp,
      ],
    );
    const row = inserted.rows[0];
    if (!row) return { ok: false, error: passkeyErrors.credentialExists() };
    await recordAccountEvent(tx, {
      action: 'passkey_created',
      userId: user.id,
      target: { type: 'passkey', id: row.id },
    });
    return {
      ok: true,
      value: {
        id: row.id,
        friendly_name: row.friendly_name,
        created_at: new Date(row.created_at).toISOString(),
      },
    };
  });
}

/** POST /passkeys/authentication/options: a challenge for any discoverable credential of this site. */
export async function authenticationStart(deps: IdentityDeps, context: RequestContext) {
  const settings = requireEnabled(deps);
  return withService(deps.pool, async (tx) => {
    // Anyone may ask, and each answer is a stored row: bounded per client address.
    if (context.ip) {
      await enforceLimits(tx, [
        {
          bucket: `auth:passkey:${context.ip}`,
          max: settings.ceremoniesPerAddress,
          windowSeconds: deps.settings.rateLimits.windowSeconds,
        },
      ]);
    }
    const options = await authenticationOptions(settings.rp, []);
    const stored = await storeChallenge(tx, settings, null, 'authentication', options.challenge);
    return { challenge_id: stored.id, options, expires_at: stored.expiresAt };
  });
}

/**
 * POST /passkeys/authentication/verify: the assertion of a registered passkey, made for this
 * challenge, site and origin, with a signature count that moved forward, opens a session for the
 * passkey's owner. The user handle the authenticator returns must name that same owner.
 */
export async function authenticationFinish(
  deps: IdentityDeps,
  input: CeremonyInput,
  context: RequestContext,
): Promise<TokenResponse> {
  const settings = requireEnabled(deps);
  return committingRefusals(deps, async (tx) => {
    const { challenge, expired } = await consumeChallenge(tx, input.challengeId, 'authentication', null);
    if (expired) return { ok: false, error: passkeyErrors.challengeExpired() };
    const parsed = authenticationResponse.safeParse(input.credential);
    if (!parsed.success) return { ok: false, error: passkeyErrors.invalidResponse() };
    const assertion = parsed.data;
    const found = await tx.query<PasskeyRow>(
      'select * from auth.webauthn_credentials where credential_id = $1 for update',
      [Buffer.from(assertion.id, 'base64url')],
    );
    const stored = found.rows[0];
    const handleUser = userIdOfHandle(assertion.response.userHandle ?? undefined);
    if (!stored || handleUser !== stored.user_id)
      return { ok: false, error: passkeyErrors.verificationFailed() };
    const newCount = await verifyAssertion(settings.rp, assertion, challenge, {
      id: stored.credential_id.toString('base64url'),
      publicKey: stored.public_key,
      signCount: Number(stored.sign_count),
      transports: stored.transports,
    });
    if (newCount === null) return { ok: false, error: passkeyErrors.verificationFailed() };
    const user = await findUserById(tx, stored.user_id);
    if (!user || user.deleted_at) return { ok: false, error: passkeyErrors.verificationFailed() };
    if (user.email && !user.email_confirmed_at)
      return { ok: false, error: passkeyErrors.emailNotConfirmed() };
    if (isBanned(user)) return { ok: false, error: passkeyErrors.banned() };
    await tx.query(
      `update auth.webauthn_credentials set sign_count = $2, last_used_at = now(), updated_at = now()
       where id = $1`,
      [stored.id, newCount],
    );
    const session = await openSession(tx, user.id, PASSKEY_METHOD, context);
    return { ok: true, value: await tokenResponse(deps, { ...user, last_sign_in_at: new Date() }, session) };
  });
}

async function listOf(db: Queryable, userId: string) {
  const result = await db.query<PasskeyRow>(
    `select id, friendly_name, created_at, last_used_at from auth.webauthn_credentials
     where user_id = $1 order by created_at, id`,
    [userId],
  );
  return result.rows.map(renderPasskey);
}

/** GET /passkeys */
export async function list(deps: IdentityDeps, claims: AccessTokenClaims) {
  requireEnabled(deps);
  return withService(deps.pool, async (tx) => {
    await requireLiveUser(tx, claims);
    return listOf(tx, claims.sub);
  });
}

/** PATCH /passkeys/{id}: a new friendly name (1 to 120 characters). */
export async function rename(deps: IdentityDeps, claims: AccessTokenClaims, passkeyId: string, name: string) {
  requireEnabled(deps);
  if (!name) throw errors.validation('friendly_name is required');
  if (name.length > 120) throw errors.validation('friendly_name must be 120 characters or less');
  return withService(deps.pool, async (tx) => {
    await requireLiveUser(tx, claims);
    const updated = await tx.query<PasskeyRow>(
      `update auth.webauthn_credentials set friendly_name = $3, updated_at = now()
       where id = $1 and user_id = $2 returning id, friendly_name, created_at, last_used_at`,
      [passkeyId, claims.sub, name],
    );
    const row = updated.rows[0];
    if (!row) throw passkeyErrors.notFound();
    return renderPasskey(row);
  });
}

/** DELETE /passkeys/{id}: another user's passkey is not found. */
export async function remove(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  passkeyId: string,
): Promise<void> {
  requireEnabled(deps);
  await withService(deps.pool, async (tx) => {
    await requireLiveUser(tx, claims);
    await requireManagementAal(tx, claims);
    const deleted = await tx.query('delete from auth.webauthn_credentials where id = $1 and user_id = $2', [
      passkeyId,
      claims.sub,
    ]);
    if ((deleted.rowCount ?? 0) === 0) throw passkeyErrors.notFound();
    await recordAccountEvent(tx, {
      action: 'passkey_deleted',
      userId: claims.sub,
      target: { type: 'passkey', id: passkeyId },
    });
  });
}

/** GET /admin/users/{id}/passkeys */
export async function adminList(deps: IdentityDeps, userId: string) {
  requireEnabled(deps);
  return withService(deps.pool, async (tx) => {
    if (!(await findUserById(tx, userId))) throw errors.userNotFound();
    return listOf(tx, userId);
  });
}

/** DELETE /admin/users/{id}/passkeys/{passkeyId} */
export async function adminRemove(deps: IdentityDeps, userId: string, passkeyId: string): Promise<void> {
  requireEnabled(deps);
  await withService(deps.pool, async (tx) => {
    if (!(await findUserById(tx, userId))) throw errors.userNotFound();
    const deleted = await tx.query('delete from auth.webauthn_credentials where id = $1 and user_id = $2', [
      passkeyId,
      userId,
    ]);
    if ((deleted.rowCount ?? 0) === 0) throw passkeyErrors.notFound();
    await recordAccountEvent(tx, {
      action: 'passkey_deleted',
      userId,
      actor: { type: 'service' },
      target: { type: 'passkey', id: passkeyId },
    });
  });
}
