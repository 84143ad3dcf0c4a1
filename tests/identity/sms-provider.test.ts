// Which text-message provider a configuration gives, and the development outbox itself: local mode
// keeps codes in internal.sms_outbox for the development mailbox, production refuses that outbox
// and has phone sign-in off unless Twilio is configured (all three of its values), and a template
// without its code is refused at start.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/server/config.js';
import { createDevOutbox, listDevSms } from '../../src/server/identity/sms/dev-outbox.js';
import { call, startTestServer, type TestServer } from '../support/server.js';

const secrets = {
  DATABASE_URL: 'postgres://x@localhost/db',
  JWT_SECRET: 'j'.repeat(40),
  PROJECT_API_KEY: 'p'.repeat(30),
  SERVICE_ROLE_KEY: 's'.repeat(30),
  PAYMENT_WEBHOOK_SECRET: 'whsec_' + 'w'.repeat(20),
  CRON_SECRET: 'c'.repeat(30),
};

describe('configuration', () => {
  test('local mode: the development outbox; production: off unless Twilio is set', async () => {
    const local = await loadConfig({ DATA_DIR: mkdtempSync(path.join(tmpdir(), 'sms-local-')) });
    expect(local.authSms.provider).toEqual({ kind: 'outbox' });
    const production = await loadConfig(secrets);
    expect(production.authSms.provider).toEqual({ kind: 'none' });
    const twilio = await loadConfig({
      ...secrets,
      SMS_TWILIO_ACCOUNT_SID: 'AC1',
      SMS_TWILIO_AUTH_TOKEN: 't',
      SMS_TWILIO_MESSAGE_SERVICE_SID: 'MG1',
    });
    expect(twilio.authSms.provider.kind).toBe('twilio');
  });

  test.each([
    [{ SMS_PROVIDER: 'outbox' }, 'SMS_PROVIDER outbox is for local mode only'],
    [
      { SMS_PROVIDER: 'twilio', SMS_TWILIO_ACCOUNT_SID: 'AC1' },
      'SMS_TWILIO_AUTH_TOKEN, SMS_TWILIO_MESSAGE_SERVICE_SID',
    ],
    [{ SMS_TEMPLATE: 'Your code' }, 'SMS_TEMPLATE'],
    [{ SMS_TEST_OTP: 'not-a-pair' }, 'SMS_TEST_OTP'],
  ])('%o is refused at start', async (bad, words) => {
    const error = await loadConfig({ ...secrets, ...bad }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(words);
  });
});

describe('the development outbox', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server?.close());

  test('keeps each message for the development mailbox, newest first', async () => {
    const outbox = createDevOutbox();
    const first = await outbox.send(server.pool, {
      phone: '15550001111',
      channel: 'sms',
      body: 'Your code is 111111',
    });
    await outbox.send(server.pool, {
      phone: '15550002222',
      channel: 'whatsapp',
      body: 'Your code is 222222',
    });
    expect(first).toMatch(/^outbox-\d+$/);
    const listed = await listDevSms(server.pool, 2);
    expect(listed.map((m) => [m.phone, m.channel, m.body])).toEqual([
      ['15550002222', 'whatsapp', 'Your code is 222222'],
      ['15550001111', 'sms', 'Your code is 111111'],
    ]);
  });

  test('production without a provider: phone sign-up and sign-in are off', async () => {
    const signup = await call(server, 'POST', '/auth/v1/signup', {
      body: { phone: '+15550003333', password: 'long enough pw' },
    });
    expect(signup.body.error_code).toBe('phone_provider_disabled');
    const settings = await call(server, 'GET', '/auth/v1/settings');
    expect(settings.body.external).toMatchObject({ phone: false });
  });
});
