// In charge of WebAuthn second factors (factor_type 'webauthn' of GoTrue's /factors): a challenge
// asks an unverified factor's authenticator to create its credential ('create') and a verified
// one's to sign ('request'); verifying the answer registers the credential or checks the
// signature and counter, then raises the session to aal2 (amr mfa/webauthn). A challenge is
// answered once, from the address that asked for it, within MFA_CHALLENGE_EXPIRY.
import type { Tx } from '../../db/transactions.js';
import type { AccessTokenClaims } from '../access-tokens.js';
import { authError, errors } from '../errors.js';
import {
  authenticationOptions,
  authenticationResponse,
  registrationOptions,
  registrationResponse,
  verifyAssertion,
  verifyRegistration,
} from '../webauthn/ceremonies.js';
import type { IdentityDeps, TokenResponse } from './context.js';
import { mfaErrors, WEBAUTHN_METHOD, type FactorRow, type VerifyInput } from './mfa.js';
import { passkeyErrors } from './passkeys.js';
import { answerChallenge, type Verdict } from './mfa-answer.js';

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
  return answerChallenge<{ web_authn_challenge: string | null; web_authn_type: string | null }>(
    deps,
    claims,
    factorId,
    input,
    {
      factorType: 'webauthn',
      method: WEBAUTHN_METHOD,
      columns: ['web_authn_challenge', 'web_authn_type'],
      // Whatever follows, a ceremony's challenge has been answered: it is never verified again.
      spentWhenAnswered: true,
      check: async (tx, factor, challenge): Promise<Verdict> => {
        // Thrown, not returned: the challenge's removal is rolled back with it.
        if (!challenge.web_authn_challenge) throw mfaErrors.challengeNotFound();
        if (answer.type !== challenge.web_authn_type) {
          const error = errors.validation(
            `WebAuthn type must be ${challenge.web_authn_type} for this challenge`,
          );
          return { result: 'unusable', error };
        }
        const malformed: Verdict = {
          result: 'unusable',
          error: errors.validation('Invalid credential_response'),
        };
        const refused: Verdict = { result: 'refused', error: passkeyErrors.verificationFailed() };
        if (answer.type === 'create') {
          const parsed = registrationResponse.safeParse(answer.response);
          if (!parsed.success) return malformed;
          const credential = await verifyRegistration(rp, parsed.data, challenge.web_authn_challenge);
          if (!credential) return refused;
          const taken = await tx.query('select 1 from auth.mfa_factors where web_authn_credential_id = $1', [
            credential.credentialId,
          ]);
          if ((taken.rowCount ?? 0) > 0)
            return { result: 'unusable', error: passkeyErrors.credentialExists() };
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
          return { result: 'verified' };
        }
        const parsed = authenticationResponse.safeParse(answer.response);
        if (!parsed.success) return malformed;
        const stored = factor.web_authn_credential_id!;
        // Only this factor's own authenticator answers for it.
        if (!stored.equals(Buffer.from(parsed.data.id, 'base64url'))) return refused;
        const newCount = await verifyAssertion(rp, parsed.data, challenge.web_authn_challenge, {
          id: stored.toString('base64url'),
          publicKey: factor.web_authn_public_key!,
          signCount: Number(factor.web_authn_sign_count ?? 0),
          transports: factor.web_authn_transports ?? [],
        });
        if (newCount === null) return refused;
        await tx.query(
          'update auth.mfa_factors set web_authn_sign_count = $2, updated_at = now() where id = $1',
          [factor.id, newCount],
        );
        return { result: 'verified' };
      },
    },
  );
}
