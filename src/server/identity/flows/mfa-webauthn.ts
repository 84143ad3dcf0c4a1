// In charge of WebAuthn second factors (factor_type 'webauthn' of GoTrue's /factors): a challenge
// asks an unverified factor's authenticator to create its credential ('create') and a verified
// one's to sign ('request'); verifying the answer registers the credential or checks the
// signature and counter, then raises the session to aal2 (amr mfa/webauthn). A challenge is
// answered once, from the address that asked for it, within MFA_CHALLENGE_EXPIRY.
import { withService, type Tx } from '../../db/transactions.js';
import type { AccessTokenClaims } from '../access-tokens.js';
import { authError, errors } from '../errors.js';
import { countHits, limitsReached } from '../rate-limit.js';
import {
  authenticationOptions,
  authenticationResponse,
  registrationOptions,
  registrationResponse,
  verifyAssertion,
  verifyRegistration,
} from '../webauthn/ceremonies.js';
import { requireLiveUser, type IdentityDeps, type TokenResponse } from './context.js';
import {
  failureLimit,
  mfaErrors,
  ownedFactor,
  raiseSession,
  WEBAUTHN_METHOD,
  type Checked,
  type FactorRow,
  type VerifyInput,
} from './mfa.js';
import { passkeyErrors } from './passkeys.js';

/** A verification's webauthn member as auth-js sends it. */
export interface WebAuthnAnswer {
  type?: string | null | undefined;
  credentialResponse?: unknown;
}

const verifyDisabled = () =>
  authError(422, 'mfa_webauthn_verify_not_enabled', 'MFA verification is disabled for WebAuthn');

/** POST /factors/{id}/challenge for a WebAuthn factor: the options navigator.credentials needs. */
export async function webauthnChallenge(deps: IdentityDeps, tx: Tx, factor: FactorRow, ip: string | null) {
  if (!deps.mfa.webauthnVerify) throw verifyDisabled();
  const rp = deps.passkeys.rp;
  let type: 'create' | 'request';
  let options;
  if (factor.status === 'unverified') {
    const user = await requireUser(tx, factor.user_id);
    // The user's other WebAuthn factors' authenticators are not registered a second time.
    const others = await tx.query<{ id: Buffer; transports: string[] | null }>(
      `select web_authn_credential_id as id, web_authn_transports as transports from auth.mfa_factors
       where user_id = $1 and web_authn_credential_id is not null`,
      [factor.user_id],
    );
    type = 'create';
    options = await registrationOptions(rp, {
      userId: user.id,
      userName: user.email ?? user.id,
      displayName: user.email ?? user.id,
      exclude: others.rows.map((c) => ({ id: c.id.toString('base64url'), transports: c.transports ?? [] })),
      discoverable: false,
    });
  } else {
    type = 'request';
    options = await authenticationOptions(rp, [
      {
        id: factor.web_authn_credential_id!.toString('base64url'),
        transports: factor.web_authn_transports ?? [],
      },
    ]);
  }
  const created = await tx.query<{ id: string; created_at: Date }>(
    `insert into auth.mfa_challenges (factor_id, ip_address, web_authn_challenge, web_authn_type)
     values ($1, $2::inet, $3, $4) returning id, created_at`,
    [factor.id, ip, options.challenge, type],
  );
  await tx.query('update auth.mfa_factors set last_challenged_at = now() where id = $1', [factor.id]);
  const row = created.rows[0]!;
  return {
    id: row.id,
    type: 'webauthn',
    expires_at: Math.floor(new Date(row.created_at).getTime() / 1000) + deps.mfa.challengeExpirySeconds,
    webauthn: { type, credential_options: { publicKey: options } },
  };
}

async function requireUser(tx: Tx, userId: string) {
  const found = await tx.query<{ id: string; email: string | null }>(
    'select id, email from auth.users where id = $1',
    [userId],
  );
  if (!found.rows[0]) throw errors.userNotFound();
  return found.rows[0];
}

/** The webauthn member checked as GoTrue checks it, before anything is looked up. */
function checkedAnswer(answer: WebAuthnAnswer | undefined): {
  type: 'create' | 'request';
  response: unknown;
} {
  if (!answer) throw errors.validation('WebAuthn config required');
  if (answer.type !== 'create' && answer.type !== 'request') {
    throw errors.validation('WebAuthn type must be create or request');
  }
  if (answer.credentialResponse === undefined || answer.credentialResponse === null) {
    throw errors.validation('credential_response required');
  }
  return { type: answer.type, response: answer.credentialResponse };
}

/** POST /factors/{id}/verify for a WebAuthn factor. */
export async function webauthnVerify(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  factorId: string,
  input: VerifyInput,
): Promise<TokenResponse> {
  if (!deps.mfa.webauthnVerify) throw verifyDisabled();
  const answer = checkedAnswer(input.webauthn);
  const rp = deps.passkeys.rp;
  const limit = failureLimit(deps, `mfa:factor:${factorId}`);
  // Refusals after the challenge is taken are returned, so that its use and the failure commit.
  const outcome = await withService(deps.pool, async (tx): Promise<Checked> => {
    await requireLiveUser(tx, claims);
    const factor = await ownedFactor(tx, claims.sub, factorId, true);
    const wait = await limitsReached(tx, limit);
    if (wait > 0) throw mfaErrors.tooManyAttempts(wait);
    const found = await tx.query<{
      id: string;
      same_address: boolean;
      verified_at: Date | null;
      expired: boolean;
      web_authn_challenge: string | null;
      web_authn_type: string | null;
    }>(
      `select id, verified_at, web_authn_challenge, web_authn_type,
         ip_address is not distinct from $4::inet as same_address,
         created_at < now() - make_interval(secs => $3) as expired
       from auth.mfa_challenges where id = $1 and factor_id = $2`,
      [input.challengeId, factor.id, deps.mfa.challengeExpirySeconds, input.ip],
    );
    const row = found.rows[0];
    if (!row || !row.web_authn_challenge) throw mfaErrors.challengeNotFound();
    if (row.verified_at !== null || !row.same_address) throw mfaErrors.ipMismatch();
    // Whatever follows, this challenge has been answered: it is never verified again.
    await tx.query('delete from auth.mfa_challenges where id = $1', [row.id]);
    if (row.expired) return { ok: false, error: mfaErrors.challengeExpired(row.id) };
    if (answer.type !== row.web_authn_type) {
      return {
        ok: false,
        error: errors.validation(`WebAuthn type must be ${row.web_authn_type} for this challenge`),
      };
    }
    const refused = async (error: Error): Promise<Checked> => {
      await countHits(tx, limit);
      return { ok: false, error };
    };
    if (answer.type === 'create') {
      const parsed = registrationResponse.safeParse(answer.response);
      if (!parsed.success) return { ok: false, error: errors.validation('Invalid credential_response') };
      const credential = await verifyRegistration(rp, parsed.data, row.web_authn_challenge);
      if (!credential) return refused(passkeyErrors.verificationFailed());
      const taken = await tx.query('select 1 from auth.mfa_factors where web_authn_credential_id = $1', [
        credential.credentialId,
      ]);
      if ((taken.rowCount ?? 0) > 0) return { ok: false, error: passkeyErrors.credentialExists() };
      await tx.query(
        `update auth.mfa_factors set status = 'verified', web_authn_credential_id = $2, web_authn_public_key = $3,
           web_authn_sign_count = $4, web_authn_transports = $5, web_authn_aaguid = $6, updated_at = now()
         where id = $1`,
        [
          factor.id,
          credential.credentialId,
          Buffer.from(credential.publicKey),
          credential.signCount,
          JSON.stringify(credential.transports),
          credential.aaguid,
        ],
      );
    } else {
      const parsed = authenticationResponse.safeParse(answer.response);
      if (!parsed.success) return { ok: false, error: errors.validation('Invalid credential_response') };
      const stored = factor.web_authn_credential_id!;
      // Only this factor's own authenticator answers for it.
      if (!stored.equals(Buffer.from(parsed.data.id, 'base64url'))) {
        return refused(passkeyErrors.verificationFailed());
      }
      const newCount = await verifyAssertion(rp, parsed.data, row.web_authn_challenge, {
        id: stored.toString('base64url'),
        publicKey: factor.web_authn_public_key!,
        signCount: Number(factor.web_authn_sign_count ?? 0),
        transports: factor.web_authn_transports ?? [],
      });
      if (newCount === null) return refused(passkeyErrors.verificationFailed());
      await tx.query(
        'update auth.mfa_factors set web_authn_sign_count = $2, updated_at = now() where id = $1',
        [factor.id, newCount],
      );
    }
    // GoTrue: once one factor is verified, the user's other unverified factors go.
    await tx.query(`delete from auth.mfa_factors where user_id = $1 and id <> $2 and status = 'unverified'`, [
      claims.sub,
      factor.id,
    ]);
    return { ok: true, response: await raiseSession(deps, tx, claims, WEBAUTHN_METHOD, factor.id) };
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.response;
}
