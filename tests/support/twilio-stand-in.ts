// Test support: a local HTTP server speaking Twilio's Messages API the way api.twilio.com does
// (POST /2010-04-01/Accounts/{sid}/Messages.json, Basic auth with the account SID and auth token,
// form-encoded To/From/MessagingServiceSid/Body; 201 with the message's JSON, or Twilio's error
// JSON), keeping every request it received so tests read the codes sent and how they were asked.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSms {
  path: string;
  authorization: string;
  contentType: string;
  form: Record<string, string>;
  /** the code in the message body (the first run of 6 to 10 digits) */
  code: string | null;
}

export interface TwilioStandIn {
  url: string;
  accountSid: string;
  authToken: string;
  received: ReceivedSms[];
  /** the messages sent to a number (E.164 with +) */
  to(phone: string): ReceivedSms[];
  /** the next request is refused with this status and Twilio error JSON */
  failNext(status: number, error: { code: number; message: string; more_info: string }): void;
  close(): Promise<void>;
}

export async function startTwilioStandIn(
  accountSid = 'AC' + 'f'.repeat(32),
  authToken = 'tok',
): Promise<TwilioStandIn> {
  const received: ReceivedSms[] = [];
  let failure: { status: number; error: Record<string, unknown> } | null = null;
  const expected = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.headers.authorization !== expected) {
        send(401, {
          code: 20003,
          message: 'Authenticate',
          more_info: 'https://www.twilio.com/docs/errors/20003',
          status: 401,
        });
        return;
      }
      if (req.method !== 'POST' || req.url !== `/2010-04-01/Accounts/${accountSid}/Messages.json`) {
        send(404, {
          code: 20404,
          message: 'The requested resource was not found',
          more_info: '',
          status: 404,
        });
        return;
      }
      const form = Object.fromEntries(new URLSearchParams(raw));
      received.push({
        path: req.url,
        authorization: req.headers.authorization ?? '',
        contentType: req.headers['content-type'] ?? '',
        form,
        code: /\b(\d{6,10})\b/.exec(form.Body ?? '')?.[1] ?? null,
      });
      if (failure) {
        const { status, error } = failure;
        failure = null;
        send(status, { ...error, status });
        return;
      }
      send(201, {
        sid: `SM${received.length.toString(16).padStart(32, '0')}`,
        status: 'queued',
        to: form.To,
        from: form.From ?? null,
        messaging_service_sid: form.MessagingServiceSid ?? null,
        body: form.Body,
        error_code: null,
        error_message: null,
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    accountSid,
    authToken,
    received,
    to: (phone) => received.filter((r) => r.form.To === phone),
    failNext: (status, error) => {
      failure = { status, error };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The environment that points Tenantry's Twilio provider at the stand-in. */
export function twilioEnv(standIn: TwilioStandIn, sender = 'MG' + '0'.repeat(32)): Record<string, string> {
  return {
    SMS_PROVIDER: 'twilio',
    SMS_TWILIO_ACCOUNT_SID: standIn.accountSid,
    SMS_TWILIO_AUTH_TOKEN: standIn.authToken,
    SMS_TWILIO_MESSAGE_SERVICE_SID: sender,
    SMS_TWILIO_API_BASE: standIn.url,
  };
}
