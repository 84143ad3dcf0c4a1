// In charge of how text messages leave the process: the pluggable provider interface, the error a
// provider's refusal becomes, and choosing the provider from the configuration (Twilio, or the
// development outbox in local mode). A message is sent inside the request that asked for it, so
// a provider's refusal reaches the caller as GoTrue's 422 sms_send_failed and nothing is kept.
import type { Queryable } from '../../db/pool.js';
import { createDevOutbox } from './dev-outbox.js';
import { createTwilioSender, type TwilioSettings } from './twilio.js';

/** GoTrue's message channels (sms_provider.IsValidMessageChannel). */
export type SmsChannel = 'sms' | 'whatsapp';

export interface SmsMessage {
  /** E.164 digits without the + */
  phone: string;
  body: string;
  channel: SmsChannel;
}

export interface SmsSender {
  /** GoTrue's SMS_PROVIDER name, shown by /settings */
  readonly name: string;
  /** the channels this provider delivers */
  readonly channels: readonly SmsChannel[];
  /** Sends the message; resolves to the provider's message id, rejects with SmsSendError. */
  send(db: Queryable, message: SmsMessage): Promise<string>;
}

/** A provider's refusal or an unreachable provider, in words fit for GoTrue's error message. */
export class SmsSendError extends Error {}

export type SmsProviderConfig =
  { kind: 'none' } | { kind: 'outbox' } | { kind: 'twilio'; twilio: TwilioSettings };

export function createSmsSender(config: SmsProviderConfig): SmsSender | null {
  switch (config.kind) {
    case 'twilio':
      return createTwilioSender(config.twilio);
    case 'outbox':
      return createDevOutbox();
    default:
      return null;
  }
}
