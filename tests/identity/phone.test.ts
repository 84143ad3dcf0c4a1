// Phone sign-in with the real supabase-js client against Tenantry with its Twilio provider pointed
// at a local stand-in speaking Twilio's API: sign-up with a phone and password confirmed by the
// SMS code, the password grant by phone, passwordless codes (/otp, create_user), wrong, expired
// and reused codes, resend frequency and the hourly limits, E.164 refusals, the test numbers of
// SMS_TEST_OTP, and a Twilio refusal surfacing as GoTrue's 422 sms_send_failed with nothing kept.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { startTwilioStandIn, twilioEnv, type TwilioStandIn } from '../support/twilio-stand-in.js';

let twilio: TwilioStandIn;
let server: TestServer;
const PASSWORD = 'correct horse battery';
const TEST_NUMBER = '15550001234';

let counter = 0;
/** A fresh, possible North American number: +1 555 then seven digits. */
const uniquePhone = () => `+1555${String((Date.now() % 100000) * 100 + (++counter % 100)).padStart(7, '0')}`;

beforeAll(async () => {
  twilio = await startTwilioStandIn();
  server = await startTestServer({
    ...twilioEnv(twilio),
    AUTH_AUTOCONFIRM: 'false',
    SMS_TEST_OTP: `${TEST_NUMBER}:424242`,
  });
});
afterAll(async () => {
  await server?.close();
  await twilio?.close();
});

function lastCode(phone: string): string {
  const messages = twilio.to(phone);
  expect(messages.length).toBeGreaterThan(0);
  return messages.at(-1)!.code!;
}

describe('sign-up with a phone and a password', () => {
  test('Twilio gets the code; the account signs in only once the code proves the number', async () => {
    const phone = uniquePhone();
    const client = server.client();
    const { data, error } = await client.auth.signUp({
      phone,
      password: PASSWORD,
      options: { data: { name: 'Ada' } },
    });
    expect(error).toBeNull();
    expect(data.session).toBeNull();
    expect(data.user?.phone).toBe(phone.slice(1));
    expect(data.user?.phone_confirmed_at).toBeUndefined();

    // What Twilio received: Basic auth, the form, the messaging service, the templated body.
    const [sent] = twilio.to(phone);
    expect(sent).toBeDefined();
    expect(sent!.authorization).toBe(
      `Basic ${Buffer.from(`${twilio.accountSid}:${twilio.authToken}`).toString('base64')}`,
    );
    expect(sent!.contentType).toBe('application/x-www-form-urlencoded');
    expect(sent!.form.MessagingServiceSid).toBe('MG' + '0'.repeat(32));
    expect(sent!.form.Body).toMatch(/^Your code is \d{6}$/);

    const early = await client.auth.signInWithPassword({ phone, password: PASSWORD });
    expect(early.error?.code).toBe('phone_not_confirmed');
    expect(early.error?.message).toBe('Phone not confirmed');

    const wrong = await client.auth.verifyOtp({
      phone,
      token: sent!.code === '000000' ? '111111' : '000000',
      type: 'sms',
    });
    expect(wrong.error?.code).toBe('otp_expired');
    expect(wrong.error?.message).toBe('Token has expired or is invalid');

    const verified = await client.auth.verifyOtp({ phone, token: sent!.code!, type: 'sms' });
    expect(verified.error).toBeNull();
    expect(verified.data.session?.access_token).toBeTruthy();
    expect(verified.data.user?.phone_confirmed_at).toBeTruthy();
    expect(verified.data.user?.user_metadata.name).toBe('Ada');
    expect(verified.data.user?.identities?.[0]?.provider).toBe('phone');

    const reused = await server.client().auth.verifyOtp({ phone, token: sent!.code!, type: 'sms' });
    expect(reused.error?.code).toBe('otp_expired');

    const signIn = await server.client().auth.signInWithPassword({ phone, password: PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data.user?.phone).toBe(phone.slice(1));
    const bad = await server.client().auth.signInWithPassword({ phone, password: 'wrong password!' });
    expect(bad.error?.code).toBe('invalid_credentials');
  });

  test('a confirmed number signing up again gets an obfuscated user, and no message', async () => {
    const phone = uniquePhone();
    await server.client().auth.signUp({ phone, password: PASSWORD });
    await server.client().auth.verifyOtp({ phone, token: lastCode(phone), type: 'sms' });
    const before = twilio.to(phone).length;
    // The minute between two codes has passed (SMS_MAX_FREQUENCY, tested below).
    await server.pool.query('delete from internal.mail_frequency');
    const again = await server.client().auth.signUp({ phone, password: 'another password' });
    expect(again.error).toBeNull();
    expect(again.data.user?.identities).toEqual([]);
    expect(twilio.to(phone)).toHaveLength(before);
    // Charged as a real code would be: asking again within the minute is refused alike.
    const soon = await server.client().auth.signUp({ phone, password: 'another password' });
    expect(soon.error?.code).toBe('over_sms_send_rate_limit');
  });

  test('an expired code is refused', async () => {
    const phone = uniquePhone();
    await server.client().auth.signUp({ phone, password: PASSWORD });
    const code = lastCode(phone);
    await server.pool.query(
      `update auth.one_time_tokens set expires_at = now() - interval '1 second' where relates_to = $1`,
      [phone.slice(1)],
    );
    const { error } = await server.client().auth.verifyOtp({ phone, token: code, type: 'sms' });
    expect(error?.code).toBe('otp_expired');
  });

  test('codes are stored hashed, never as sent', async () => {
    const phone = uniquePhone();
    await server.client().auth.signUp({ phone, password: PASSWORD });
    const code = lastCode(phone);
    const rows = await server.pool.query<{ otp_hash: Buffer; expires_at: Date }>(
      'select otp_hash, expires_at from auth.one_time_tokens where relates_to = $1',
      [phone.slice(1)],
    );
    expect(rows.rows).toHaveLength(1);
    expect(rows.rows[0]!.otp_hash.toString('utf8')).not.toContain(code);
    // SMS_OTP_EXP's default: one minute.
    expect(rows.rows[0]!.expires_at.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
  });
});

describe('passwordless codes (/otp with a phone)', () => {
  test('an unknown number becomes an account; its code signs in', async () => {
    const phone = uniquePhone();
    const { data, error } = await server.client().auth.signInWithOtp({ phone });
    expect(error).toBeNull();
    expect(data.session).toBeNull();
    const verified = await server.client().auth.verifyOtp({ phone, token: lastCode(phone), type: 'sms' });
    expect(verified.error).toBeNull();
    expect(verified.data.session).not.toBeNull();
  });

  test('shouldCreateUser false: an unknown number gets nothing, answered alike', async () => {
    const phone = uniquePhone();
    const { error } = await server
      .client()
      .auth.signInWithOtp({ phone, options: { shouldCreateUser: false } });
    expect(error).toBeNull();
    expect(twilio.to(phone)).toHaveLength(0);
    const users = await server.pool.query('select 1 from auth.users where phone = $1', [phone.slice(1)]);
    expect(users.rowCount).toBe(0);
  });

  test('one code a minute per number (SMS_MAX_FREQUENCY), for resend too', async () => {
    const phone = uniquePhone();
    await server.client().auth.signUp({ phone, password: PASSWORD });
    const again = await server.client().auth.resend({ phone, type: 'sms' });
    expect(again.error?.status).toBe(429);
    expect(again.error?.code).toBe('over_sms_send_rate_limit');
    expect(again.error?.message).toMatch(
      /^For security purposes, you can only request this after \d+ seconds\.$/,
    );
    expect(twilio.to(phone)).toHaveLength(1);
  });

  test('a test number (SMS_TEST_OTP) gets its fixed code and no message', async () => {
    const before = twilio.received.length;
    const { error } = await server.client().auth.signInWithOtp({ phone: `+${TEST_NUMBER}` });
    expect(error).toBeNull();
    expect(twilio.received).toHaveLength(before);
    const verified = await server
      .client()
      .auth.verifyOtp({ phone: `+${TEST_NUMBER}`, token: '424242', type: 'sms' });
    expect(verified.error).toBeNull();
  });
});

describe('refusals', () => {
  test.each([['+1555'], ['12ab34'], ['+0123456789'], ['+9991234567']])(
    '%s is not an E.164 number',
    async (phone) => {
      const res = await call(server, 'POST', '/auth/v1/otp', { body: { phone } });
      expect(res.status).toBe(400);
      expect(res.body.error_code).toBe('validation_failed');
      expect(res.body.msg).toBe('Invalid phone number format (E.164 required)');
    },
  );

  test('an unknown channel is refused', async () => {
    const res = await call(server, 'POST', '/auth/v1/otp', {
      body: { phone: uniquePhone(), channel: 'pigeon' },
    });
    expect(res.status).toBe(400);
    expect(res.body.msg).toBe("Invalid channel, supported values are 'sms' or 'whatsapp'");
  });

  test("Twilio's refusal is GoTrue's 422 sms_send_failed, and the sign-up leaves nothing", async () => {
    const phone = uniquePhone();
    twilio.failNext(400, {
      code: 21211,
      message: "The 'To' number is not a valid phone number.",
      more_info: 'https://www.twilio.com/docs/errors/21211',
    });
    const { error } = await server.client().auth.signUp({ phone, password: PASSWORD });
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('sms_send_failed');
    expect(error?.message).toBe(
      "Error sending confirmation OTP to provider: The 'To' number is not a valid phone number. More information: https://www.twilio.com/docs/errors/21211",
    );
    const users = await server.pool.query('select 1 from auth.users where phone = $1', [phone.slice(1)]);
    expect(users.rowCount).toBe(0);
    // Nothing held back: the next attempt goes through at once.
    const retry = await server.client().auth.signUp({ phone, password: PASSWORD });
    expect(retry.error).toBeNull();
  });

  test('/settings says phone is on, through Twilio', async () => {
    const res = await call(server, 'GET', '/auth/v1/settings');
    expect(res.body.external).toMatchObject({ phone: true });
    expect(res.body.sms_provider).toBe('twilio');
    expect(res.body.phone_autoconfirm).toBe(false);
  });
});

describe('hourly limits', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({
      ...twilioEnv(twilio),
      AUTH_AUTOCONFIRM: 'false',
      SMS_MAX_FREQUENCY: '0',
      RATE_LIMIT_SMS_PER_NUMBER: '2',
      RATE_LIMIT_SMS_PER_ADDRESS: '4',
    });
  });
  afterAll(() => limited?.close());

  test('per number, then per client address: 429 "SMS rate limit exceeded"', async () => {
    const phone = uniquePhone();
    for (let i = 0; i < 2; i++)
      expect((await limited.client().auth.signInWithOtp({ phone })).error).toBeNull();
    const third = await limited.client().auth.signInWithOtp({ phone });
    expect(third.error?.status).toBe(429);
    expect(third.error?.code).toBe('over_sms_send_rate_limit');
    expect(third.error?.message).toBe('SMS rate limit exceeded');
    expect(twilio.to(phone)).toHaveLength(2);

    const other = uniquePhone();
    for (let i = 0; i < 2; i++)
      expect((await limited.client().auth.signInWithOtp({ phone: other })).error).toBeNull();
    const beyond = await limited.client().auth.signInWithOtp({ phone: uniquePhone() });
    expect(beyond.error?.message).toBe('SMS rate limit exceeded');
  });
});

describe('changing the phone (PUT /user {phone})', () => {
  test('the new number is the account’s only once its code comes back (verify type phone_change)', async () => {
    const client = server.client();
    const email = `phone-change-${Date.now()}@example.com`;
    await server.adminClient().auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
    expect((await client.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
    const phone = uniquePhone();

    const { data, error } = await client.auth.updateUser({ phone });
    expect(error).toBeNull();
    expect(data.user?.phone).toBe('');
    expect(data.user?.new_phone).toBe(phone.slice(1));
    const code = lastCode(phone);

    // Within the minute a resend is refused; the code already sent still works.
    const resent = await client.auth.resend({ phone, type: 'phone_change' });
    expect(resent.error?.code).toBe('over_sms_send_rate_limit');

    const wrong = await client.auth.verifyOtp({
      phone,
      token: code === '000000' ? '111111' : '000000',
      type: 'phone_change',
    });
    expect(wrong.error?.code).toBe('otp_expired');
    const verified = await client.auth.verifyOtp({ phone, token: code, type: 'phone_change' });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.phone).toBe(phone.slice(1));
    expect(verified.data.user?.new_phone).toBeUndefined();
    expect(verified.data.user?.phone_confirmed_at).toBeTruthy();

    // The number now signs in with the account's password.
    const byPhone = await server.client().auth.signInWithPassword({ phone, password: PASSWORD });
    expect(byPhone.error).toBeNull();
    expect(byPhone.data.user?.email).toBe(email);
  });

  test("another account's number is refused and nothing is sent", async () => {
    const taken = uniquePhone();
    await server.client().auth.signUp({ phone: taken, password: PASSWORD });
    await server.client().auth.verifyOtp({ phone: taken, token: lastCode(taken), type: 'sms' });
    const client = server.client();
    const email = `phone-taken-${Date.now()}@example.com`;
    await server.adminClient().auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
    await client.auth.signInWithPassword({ email, password: PASSWORD });
    const before = twilio.to(taken).length;
    const { error } = await client.auth.updateUser({ phone: taken });
    expect(error?.code).toBe('phone_exists');
    expect(error?.message).toBe('A user with this phone number has already been registered');
    expect(twilio.to(taken)).toHaveLength(before);
  });

  test('resend phone_change for a number nobody is moving to answers {} and sends nothing', async () => {
    const phone = uniquePhone();
    for (let i = 0; i < 2; i++) {
      const { error } = await server.client().auth.resend({ phone, type: 'phone_change' });
      expect(error).toBeNull();
    }
    expect(twilio.to(phone)).toHaveLength(0);
  });
});
