// In charge of sending a phone code, as GoTrue's sendPhoneConfirmation does: the number's
// frequency slot (SMS_MAX_FREQUENCY, 429 over_sms_send_rate_limit), the hourly limits on messages
// (all numbers, per number, per client address), the code issued as a one-time token (hashed,
// expiring, single use) replacing the previous one, the message sent through the provider (its
// refusal 422 sms_send_failed), and the user's *_sent_at stamped. A test number's fixed code
// (SMS_TEST_OTP) is issued without any message or hourly count.
import { createHash } from 'node:crypto';
import type { Queryable } from '../../db/pool.js';
import type { Tx } from '../../db/transactions.js';
import { authError, errors } from '../errors.js';
import { issueOneTimeToken, type AccountProposal, type OneTimeTokenKey } from '../one-time-tokens.js';
import { enforceLimits, type Limit } from '../rate-limit.js';
import { SmsSendError, type SmsChannel, type SmsSender } from './provider.js';

export interface PhoneSettings {
  /** null: phone sign-in is off (no provider configured) */
  sender: SmsSender | null;
  tokenKey: OneTimeTokenKey;
  autoconfirm: boolean;
  maxFrequencySeconds: number;
  otpExpirySeconds: number;
  otpLength: number;
  template: string;
  testOtp: Record<string, string>;
  sentPerHour: number;
  perNumberPerHour: number;
  perAddressPerHour: number;
}

export const phoneErrors = {
  signupsDisabled: () => authError(400, 'phone_provider_disabled', 'Phone signups are disabled'),
  loginsDisabled: () => authError(400, 'phone_provider_disabled', 'Phone logins are disabled'),
  invalidChannel: () => errors.validation("Invalid channel, supported values are 'sms' or 'whatsapp'"),
  frequency: (seconds: number) =>
    authError(
      429,
      'over_sms_send_rate_limit',
      `For security purposes, you can only request this after ${seconds} seconds.`,
      { 'Retry-After': String(seconds) },
    ),
  rateLimit: (seconds: number) =>
    authError(429, 'over_sms_send_rate_limit', 'SMS rate limit exceeded', { 'Retry-After': String(seconds) }),
  sendFailed: (otpType: string, reason: string) =>
    authError(422, 'sms_send_failed', `Error sending ${otpType} OTP to provider: ${reason}`),
  notConfirmed: () => authError(400, 'phone_not_confirmed', 'Phone not confirmed'),
  phoneExists: () =>
    authError(422, 'phone_exists', 'A user with this phone number has already been registered'),
};

/** The channel a request names, sms when it names none; refused when the provider has no such channel. */
export function readChannel(settings: PhoneSettings, raw: string | null | undefined): SmsChannel {
  const channel = raw || 'sms';
  if (channel !== 'sms' && channel !== 'whatsapp') throw phoneErrors.invalidChannel();
  if (settings.sender && !settings.sender.channels.includes(channel)) throw phoneErrors.invalidChannel();
  return channel;
}

/** GoTrue's phone OTP kinds: which token, which user column, and the word in its error message. */
const KINDS = {
  confirmation: { tokenType: 'confirmation_token', sentAt: 'confirmation_sent_at' },
  phone_change: { tokenType: 'phone_change_token', sentAt: 'phone_change_sent_at' },
  reauthentication: { tokenType: 'reauthentication_token', sentAt: 'reauthentication_sent_at' },
} as const;
export type PhoneCodeKind = keyof typeof KINDS;

function slotKey(kind: PhoneCodeKind, phone: string): Buffer {
  return createHash('sha256').update(`sms:${kind}:${phone}`, 'utf8').digest();
}

/**
 * Claims the number's frequency slot for this kind of code (429 when too soon). Called for unknown
 * numbers too, so a repeated request is answered alike whether or not the number has an account.
 */
export async function claimSmsSlot(
  db: Queryable,
  settings: PhoneSettings,
  kind: PhoneCodeKind,
  phone: string,
): Promise<void> {
  if (settings.maxFrequencySeconds <= 0) return;
  const result = await db.query<{ wait: number }>('select internal.claim_mail_slot($1, $2) as wait', [
    slotKey(kind, phone),
    settings.maxFrequencySeconds,
  ]);
  const wait = result.rows[0]?.wait ?? 0;
  if (wait > 0) throw phoneErrors.frequency(wait);
}

function hourlyLimits(settings: PhoneSettings, phone: string, ip: string | null): Limit[] {
  const limits: Limit[] = [
    { bucket: 'auth:sms-sent', max: settings.sentPerHour, windowSeconds: 3600 },
    { bucket: `sms:number:${phone}`, max: settings.perNumberPerHour, windowSeconds: 3600 },
  ];
  if (ip) limits.push({ bucket: `sms:ip:${ip}`, max: settings.perAddressPerHour, windowSeconds: 3600 });
  return limits;
}

export interface PhoneCodeRequest {
  kind: PhoneCodeKind;
  userId: string;
  /** where the code goes (the new number for a phone change) */
  phone: string;
  channel: SmsChannel;
  ip: string | null;
  /** what the account takes when this code proves the number (see one-time-tokens.ts) */
  proposal?: AccountProposal | 'carry';
}

/** The whole send, in `tx`: whatever refuses it (frequency, limits, provider) leaves nothing behind. */
export async function sendPhoneCode(
  tx: Tx,
  settings: PhoneSettings,
  request: PhoneCodeRequest,
): Promise<string> {
  const sender = settings.sender;
  if (!sender) throw phoneErrors.loginsDisabled();
  const spec = KINDS[request.kind];
  await claimSmsSlot(tx, settings, request.kind, request.phone);
  const testOtp = settings.testOtp[request.phone];
  if (!testOtp)
    await enforceLimits(tx, hourlyLimits(settings, request.phone, request.ip), phoneErrors.rateLimit);
  const token = await issueOneTimeToken(tx, settings.tokenKey, {
    userId: request.userId,
    type: spec.tokenType,
    relatesTo: request.phone,
    ttlSeconds: settings.otpExpirySeconds,
    otpLength: settings.otpLength,
    ...(testOtp ? { otp: testOtp } : {}),
    ...(request.proposal ? { proposal: request.proposal } : {}),
  });
  let messageId = 'test-otp';
  if (!testOtp) {
    const body = settings.template.replaceAll('{{ .Code }}', token.otp);
    try {
      messageId = await sender.send(tx, { phone: request.phone, body, channel: request.channel });
    } catch (error) {
      if (error instanceof SmsSendError) throw phoneErrors.sendFailed(request.kind, error.message);
      throw error;
    }
  }
  // The column name comes from the table above, never from a request.
  await tx.query(`update auth.users set ${spec.sentAt} = now(), updated_at = now() where id = $1`, [
    request.userId,
  ]);
  return messageId;
}
