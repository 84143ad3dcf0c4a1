// In charge of sending text messages through Twilio's Messages REST API (2010-04-01), as GoTrue's
// Twilio provider does: Basic auth with the account SID and auth token, a form-encoded To (+E.164),
// From or MessagingServiceSid, Body; 200/201 with the message's JSON, whose status may still say
// failed; any other answer carries Twilio's error JSON, whose message becomes ours.
import type { SmsSender } from './provider.js';
import { SmsSendError } from './provider.js';

export interface TwilioSettings {
  accountSid: string;
  authToken: string;
  /** a Messaging Service SID (MG…) or a sender number (SMS_TWILIO_MESSAGE_SERVICE_SID) */
  messageServiceSid: string;
  /** https://api.twilio.com unless pointed elsewhere (SMS_TWILIO_API_BASE, for a stand-in) */
  apiBase: string;
  /** how long one request may take before the send counts as failed */
  timeoutMs: number;
}

interface TwilioMessage {
  sid?: string;
  status?: string;
  error_code?: number | string | null;
  error_message?: string | null;
}

interface TwilioError {
  code?: number;
  message?: string;
  more_info?: string;
}

export function createTwilioSender(settings: TwilioSettings): SmsSender {
  const url = `${settings.apiBase.replace(/\/+$/, '')}/2010-04-01/Accounts/${encodeURIComponent(settings.accountSid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${settings.accountSid}:${settings.authToken}`).toString('base64')}`;
  // A Messaging Service is named by its SID (MG…); anything else is the sender's number.
  const service = settings.messageServiceSid.startsWith('MG');
  return {
    name: 'twilio',
    channels: ['sms', 'whatsapp'],
    async send(_db, message) {
      const whatsapp = message.channel === 'whatsapp';
      const form = new URLSearchParams();
      form.set('To', whatsapp ? `whatsapp:+${message.phone}` : `+${message.phone}`);
      if (service) form.set('MessagingServiceSid', settings.messageServiceSid);
      else {
        const from = settings.messageServiceSid.replace(/^whatsapp:/, '');
        form.set('From', whatsapp ? `whatsapp:${from}` : from);
      }
      form.set('Body', message.body);
      let response: Response;
      try {
        response = await fetch(url, {
          method: 'POST',
          headers: { authorization, 'content-type': 'application/x-www-form-urlencoded' },
          body: form,
          signal: AbortSignal.timeout(settings.timeoutMs),
        });
      } catch (error) {
        throw new SmsSendError(`Twilio is unreachable: ${(error as Error).message}`);
      }
      const text = await response.text();
      let json: unknown = null;
      try {
        json = JSON.parse(text);
      } catch {
        // not JSON: said below with the status
      }
      if (response.status !== 200 && response.status !== 201) {
        const refusal = (json ?? {}) as TwilioError;
        if (!refusal.message) throw new SmsSendError(`Twilio answered ${response.status}`);
        throw new SmsSendError(`${refusal.message} More information: ${refusal.more_info ?? ''}`.trim());
      }
      const sent = (json ?? {}) as TwilioMessage;
      if (sent.status === 'failed' || sent.status === 'undelivered') {
        throw new SmsSendError(
          `twilio error: ${sent.error_message ?? ''} ${sent.error_code ?? ''} for message ${sent.sid ?? ''}`,
        );
      }
      return sent.sid ?? '';
    },
  };
}
