// In charge of phone second factors (GoTrue's factor_type "phone"): creating one at enrolment
// (one verified factor per number; unverified ones with the number replaced), the challenge that
// sends a code by SMS or WhatsApp (the factor's own frequency, the hourly SMS limits), and the
// verification that compares the code in constant time and raises the session to aal2.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { recordAccountEvent } from '../audit.js';
import type { Tx } from '../../db/transactions.js';
import type { AccessTokenClaims } from '../access-tokens.js';
import { authError } from '../errors.js';
import { generateOtp } from '../one-time-tokens.js';
import { enforceLimits } from '../rate-limit.js';
import { phoneErrors } from '../sms/phone-codes.js';
import { SmsSendError, type SmsChannel } from '../sms/provider.js';
import type { IdentityDeps, TokenResponse } from './context.js';
import { answerChallenge } from './mfa-answer.js';
import type { FactorRow, VerifyInput } from './mfa.js';

/** The amr method of a session raised by a phone factor (GoTrue's MFAPhone). */
export const PHONE_METHOD = 'mfa/phone';

export const phoneFactorErrors = {
  enrollDisabled: () => authError(422, 'mfa_phone_enroll_not_enabled', 'MFA enroll is disabled for Phone'),
  verifyDisabled: () =>
    authError(422, 'mfa_phone_verify_not_enabled', 'MFA verification is disabled for Phone'),
  verifiedExists: () =>
    authError(
      422,
      'mfa_verified_factor_exists',
      'A verified phone factor already exists, unenroll the existing factor to continue',
    ),
  invalidCode: () => authError(422, 'mfa_verification_failed', 'Invalid MFA Phone code entered'),
};

// The code is kept as an HMAC bound to its challenge, never as sent (a copy of the table reveals nothing).
function codeKey(deps: IdentityDeps): Buffer {
  return Buffer.from(hkdfSync('sha256', deps.phone.tokenKey.otpKey, 'tenantry', 'mfa-phone-code', 32));
}
function hashCode(deps: IdentityDeps, challengeId: string, code: string): Buffer {
  return createHmac('sha256', codeKey(deps)).update(`${challengeId}:${code}`, 'utf8').digest();
}

/**
 * Before the enrolment's shared checks: a verified factor with the number refuses it, and the
 * user's unverified factors with the number go (GoTrue's enrollPhoneFactor).
 */
export async function clearForPhoneEnrolment(tx: Tx, userId: string, phone: string): Promise<void> {
  const same = await tx.query<{ status: string }>(
    `select status from auth.mfa_factors where user_id = $1 and factor_type = 'phone' and phone = $2`,
    [userId, phone],
  );
  if (same.rows.some((f) => f.status === 'verified')) throw phoneFactorErrors.verifiedExists();
  await tx.query(
    `delete from auth.mfa_factors where user_id = $1 and factor_type = 'phone' and phone = $2 and status = 'unverified'`,
    [userId, phone],
  );
}

/** The new unverified phone factor, in GoTrue's enrolment answer. */
export async function createPhoneFactor(tx: Tx, userId: string, phone: string, friendlyName: string) {
  const created = await tx.query<{ id: string }>(
    `insert into auth.mfa_factors (user_id, friendly_name, factor_type, phone) values ($1, $2, 'phone', $3) returning id`,
    [userId, friendlyName || null, phone],
  );
  const id = created.rows[0]!.id;
  await recordAccountEvent(tx, {
    action: 'factor_in_progress',
    userId,
    target: { type: 'factor', id },
    details: { factor_type: 'phone' },
  });
  return { id, type: 'phone', friendly_name: friendlyName, phone };
}

/** POST /factors/{id}/challenge for a phone factor: a code to its number, then the challenge. */
export async function phoneChallenge(
  deps: IdentityDeps,
  tx: Tx,
  factor: FactorRow,
  ip: string | null,
  channel: SmsChannel,
): Promise<{ id: string; type: 'phone'; expires_at: number }> {
  const sender = deps.phone.sender;
  if (!sender) throw phoneFactorErrors.verifyDisabled();
  if (!sender.channels.includes(channel)) throw phoneErrors.invalidChannel();
  const phone = factor.phone!;
  // The factor's own frequency (GoTrue's MFA_PHONE_MAX_FREQUENCY), from its last challenge.
  const recent = await tx.query<{ wait: number }>(
    `select ceil(extract(epoch from (last_challenged_at + make_interval(secs => $2) - now())))::int as wait
     from auth.mfa_factors where id = $1 and last_challenged_at > now() - make_interval(secs => $2)`,
    [factor.id, deps.mfa.phoneMaxFrequencySeconds],
  );
  const wait = recent.rows[0]?.wait;
  if (wait !== undefined) throw phoneErrors.frequency(Math.max(1, wait));
  const sms = deps.phone;
  const limits = [
    { bucket: 'auth:sms-sent', max: sms.sentPerHour, windowSeconds: 3600 },
    { bucket: `sms:number:${phone}`, max: sms.perNumberPerHour, windowSeconds: 3600 },
    ...(ip ? [{ bucket: `sms:ip:${ip}`, max: sms.perAddressPerHour, windowSeconds: 3600 }] : []),
  ];
  await enforceLimits(tx, limits, phoneErrors.rateLimit);
  const id = crypto.randomUUID();
  const code = generateOtp(sms.otpLength);
  const created = await tx.query<{ created_at: Date }>(
    `insert into auth.mfa_challenges (id, factor_id, ip_address, otp_code, channel)
     values ($1, $2, $3::inet, $4, $5) returning created_at`,
    [id, factor.id, ip, hashCode(deps, id, code), channel],
  );
  await tx.query('update auth.mfa_factors set last_challenged_at = now() where id = $1', [factor.id]);
  try {
    await sender.send(tx, { phone, channel, body: sms.template.replaceAll('{{ .Code }}', code) });
  } catch (error) {
    // GoTrue answers 500 "error sending message"; the provider's words are more use to the caller.
    if (error instanceof SmsSendError) throw phoneErrors.sendFailed('mfa', error.message);
    throw error;
  }
  return {
    id,
    type: 'phone' as const,
    expires_at:
      Math.floor(new Date(created.rows[0]!.created_at).getTime() / 1000) + deps.mfa.challengeExpirySeconds,
  };
}

/** POST /factors/{id}/verify for a phone factor: the challenge's code, once, raises the session. */
export async function phoneVerify(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  factorId: string,
  input: VerifyInput,
): Promise<TokenResponse> {
  if (!deps.phone.sender) throw phoneFactorErrors.verifyDisabled();
  return answerChallenge<{ otp_code: Buffer | null }>(deps, claims, factorId, input, {
    factorType: 'phone',
    method: PHONE_METHOD,
    columns: ['otp_code'],
    check: async (tx, factor, challenge) => {
      const expected = challenge.otp_code;
      const given = hashCode(deps, challenge.id, input.code);
      if (!expected || expected.length !== given.length || !timingSafeEqual(expected, given)) {
        return { result: 'refused', error: phoneFactorErrors.invalidCode() };
      }
      // Used once: the challenge is spent and its code forgotten.
      await tx.query('update auth.mfa_challenges set verified_at = now(), otp_code = null where id = $1', [
        challenge.id,
      ]);
      await tx.query(`update auth.mfa_factors set status = 'verified', updated_at = now() where id = $1`, [
        factor.id,
      ]);
      return { result: 'verified' };
    },
  });
}
