// In charge of answering an MFA challenge: the steps every kind of factor's verification shares.
// Before the factor's own check: the user is still live, the factor is locked (concurrent answers
// take turns, so one code cannot be accepted twice by racing), failed attempts are within their
// limit, and the challenge exists, is unanswered, comes from the address that asked for it
// (GoTrue's rule) and has not expired. After it: a refusal is counted and recorded, a success
// removes the user's other unverified factors (GoTrue's rule), is recorded, and raises the session.
import { recordAccountEvent } from '../audit.js';
import { withService, type Tx } from '../../db/transactions.js';
import type { AccessTokenClaims } from '../access-tokens.js';
import { countHits, limitsReached } from '../rate-limit.js';
import { requireLiveUser, type IdentityDeps, type TokenResponse } from './context.js';
import {
  failureLimit,
  mfaErrors,
  ownedFactor,
  raiseSession,
  type FactorRow,
  type VerifyInput,
} from './mfa.js';

/** What every challenge row answers with, whatever its factor. */
export interface ChallengeRow {
  id: string;
  verified_at: Date | null;
  same_address: boolean;
  expired: boolean;
}

/** The factor's own verdict on an answer. */
export type Verdict =
  /** right: the check has already marked the factor verified */
  | { result: 'verified' }
  /** wrong: counts as a failed attempt and is recorded */
  | { result: 'refused'; error: Error }
  /** unusable (malformed, or out of turn): refused without counting */
  | { result: 'unusable'; error: Error };

export interface FactorCheck<Extra> {
  factorType: 'totp' | 'phone' | 'webauthn';
  /** the amr method the session is raised with */
  method: string;
  /** the challenge's own columns the check reads: fixed names from code, never input */
  columns: readonly (keyof Extra & string)[];
  /** true where answering spends the challenge whatever the verdict (a WebAuthn ceremony) */
  spentWhenAnswered?: boolean;
  check(tx: Tx, factor: FactorRow, challenge: ChallengeRow & Extra): Promise<Verdict>;
}

/** POST /factors/{id}/verify, the shared part: see the module's first lines. */
export async function answerChallenge<Extra>(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  factorId: string,
  input: VerifyInput,
  factorCheck: FactorCheck<Extra>,
): Promise<TokenResponse> {
  const limit = failureLimit(deps, `mfa:factor:${factorId}`);
  const recordAttempt = (tx: Tx, factor: FactorRow, result: string) =>
    recordAccountEvent(tx, {
      action: 'verification_attempted',
      userId: claims.sub,
      target: { type: 'factor', id: factor.id },
      details: { factor_type: factorCheck.factorType, result },
    });
  // A refusal must still commit what it counted (and a spent challenge its removal), so failures
  // are returned from the transaction, not thrown in it, and thrown once it has committed.
  const outcome = await withService(
    deps.pool,
    async (tx): Promise<{ ok: true; response: TokenResponse } | { ok: false; error: Error }> => {
      await requireLiveUser(tx, claims);
      const factor = await ownedFactor(tx, claims.sub, factorId, true);
      const wait = await limitsReached(tx, limit);
      if (wait > 0) throw mfaErrors.tooManyAttempts(wait);
      const extra = factorCheck.columns.map((column) => `, ${column}`).join('');
      const found = await tx.query<ChallengeRow & Extra>(
        `select id, verified_at${extra}, ip_address is not distinct from $4::inet as same_address,
           created_at < now() - make_interval(secs => $3) as expired
         from auth.mfa_challenges where id = $1 and factor_id = $2`,
        [input.challengeId, factor.id, deps.mfa.challengeExpirySeconds, input.ip],
      );
      const challenge = found.rows[0];
      if (!challenge) throw mfaErrors.challengeNotFound();
      if (challenge.verified_at !== null || !challenge.same_address) throw mfaErrors.ipMismatch();
      if (factorCheck.spentWhenAnswered || challenge.expired) {
        await tx.query('delete from auth.mfa_challenges where id = $1', [challenge.id]);
      }
      if (challenge.expired) return { ok: false, error: mfaErrors.challengeExpired(challenge.id) };
      const verdict = await factorCheck.check(tx, factor, challenge);
      if (verdict.result === 'unusable') return { ok: false, error: verdict.error };
      if (verdict.result === 'refused') {
        await countHits(tx, limit);
        await recordAttempt(tx, factor, 'invalid_code');
        return { ok: false, error: verdict.error };
      }
      await tx.query(
        `delete from auth.mfa_factors where user_id = $1 and id <> $2 and status = 'unverified'`,
        [claims.sub, factor.id],
      );
      await recordAttempt(tx, factor, 'verified');
      return { ok: true, response: await raiseSession(deps, tx, claims, factorCheck.method, factor.id) };
    },
  );
  if (!outcome.ok) throw outcome.error;
  return outcome.response;
}
