// Phone second factors with the real supabase-js client, codes sent through Tenantry's Twilio
// provider to a local stand-in: enrol with a number, a challenge texts a code, the right code
// raises the session to aal2 (amr mfa/phone), wrong, reused and expired codes are refused, one
// verified factor per number, unverified ones replaced, the factor's challenge frequency, unenrol.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { SupabaseClient } from '@supabase/supabase-js';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { startTwilioStandIn, twilioEnv, type TwilioStandIn } from '../support/twilio-stand-in.js';

let twilio: TwilioStandIn;
let server: TestServer;
const PASSWORD = 'correct horse battery';
let counter = 0;
const uniquePhone = () => `+1555${String((Date.now() % 100000) * 100 + (++counter % 100)).padStart(7, '0')}`;

beforeAll(async () => {
  twilio = await startTwilioStandIn();
  server = await startTestServer({ ...twilioEnv(twilio), MFA_PHONE_MAX_FREQUENCY: '2' });
});
afterAll(async () => {
  await server?.close();
  await twilio?.close();
});

async function signedIn(): Promise<SupabaseClient> {
  const client = server.client();
  const email = `phone-mfa-${++counter}-${Date.now()}@example.com`;
  const { error } = await client.auth.signUp({ email, password: PASSWORD });
  expect(error).toBeNull();
  return client;
}

const codeSentTo = (phone: string) => twilio.to(phone).at(-1)?.code ?? null;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('enrol a phone, challenge texts a code, the code raises the session to aal2', async () => {
  const client = await signedIn();
  const phone = uniquePhone();
  const enrolled = await client.auth.mfa.enroll({ factorType: 'phone', phone, friendlyName: 'My phone' });
  expect(enrolled.error).toBeNull();
  expect(enrolled.data).toMatchObject({ type: 'phone', friendly_name: 'My phone', phone: phone.slice(1) });
  const factorId = enrolled.data!.id;

  const challenge = await client.auth.mfa.challenge({ factorId });
  expect(challenge.error).toBeNull();
  expect(challenge.data).toMatchObject({ type: 'phone' });
  const code = codeSentTo(phone);
  expect(code).toMatch(/^\d{6}$/);
  const rows = await server.pool.query<{ otp_code: Buffer }>(
    'select otp_code from auth.mfa_challenges where id = $1',
    [challenge.data!.id],
  );
  expect(rows.rows[0]!.otp_code.toString('utf8')).not.toContain(code!);

  const wrong = await client.auth.mfa.verify({
    factorId,
    challengeId: challenge.data!.id,
    code: code === '000000' ? '111111' : '000000',
  });
  expect(wrong.error?.code).toBe('mfa_verification_failed');
  expect(wrong.error?.message).toBe('Invalid MFA Phone code entered');

  const verified = await client.auth.mfa.verify({ factorId, challengeId: challenge.data!.id, code: code! });
  expect(verified.error).toBeNull();
  const aal = await client.auth.mfa.getAuthenticatorAssuranceLevel();
  expect(aal.data?.currentLevel).toBe('aal2');
  expect(aal.data?.currentAuthenticationMethods.map((m) => (typeof m === 'string' ? m : m.method))).toContain(
    'mfa/phone',
  );

  // Both answers are in the security log, as a TOTP factor's are.
  const attempts = await server.pool.query<{ result: string }>(
    `select details->>'result' as result from public.audit_events
     where action = 'verification_attempted' and target_id = $1 and details->>'factor_type' = 'phone'
     order by created_at`,
    [factorId],
  );
  expect(attempts.rows.map((r) => r.result)).toEqual(['invalid_code', 'verified']);

  // Spent: the same challenge and code do not work twice.
  const again = await client.auth.mfa.verify({ factorId, challengeId: challenge.data!.id, code: code! });
  expect(again.error?.code).toBe('mfa_ip_address_mismatch');

  const factors = await client.auth.mfa.listFactors();
  expect(factors.data?.phone.map((f) => f.id)).toEqual([factorId]);

  // One verified factor per number.
  const twice = await client.auth.mfa.enroll({ factorType: 'phone', phone });
  expect(twice.error?.code).toBe('mfa_verified_factor_exists');
  expect(twice.error?.message).toBe(
    'A verified phone factor already exists, unenroll the existing factor to continue',
  );

  const removed = await client.auth.mfa.unenroll({ factorId });
  expect(removed.error).toBeNull();
});

test('an unverified factor for the same number is replaced; challenges keep their frequency', async () => {
  const client = await signedIn();
  const phone = uniquePhone();
  const first = await client.auth.mfa.enroll({ factorType: 'phone', phone });
  const second = await client.auth.mfa.enroll({ factorType: 'phone', phone });
  expect(second.error).toBeNull();
  const left = await server.pool.query('select id from auth.mfa_factors where phone = $1', [phone.slice(1)]);
  expect(left.rows.map((r) => r.id)).toEqual([second.data!.id]);
  expect(first.data!.id).not.toBe(second.data!.id);

  expect((await client.auth.mfa.challenge({ factorId: second.data!.id })).error).toBeNull();
  const soon = await client.auth.mfa.challenge({ factorId: second.data!.id });
  expect(soon.error?.code).toBe('over_sms_send_rate_limit');
  expect(twilio.to(phone)).toHaveLength(1);
  await pause(2100);
  const whatsapp = await client.auth.mfa.challenge({ factorId: second.data!.id, channel: 'whatsapp' });
  expect(whatsapp.error).toBeNull();
  expect(twilio.received.at(-1)!.form.To).toBe(`whatsapp:${phone}`);
});

test('an expired challenge is refused', async () => {
  const client = await signedIn();
  const phone = uniquePhone();
  const { data } = await client.auth.mfa.enroll({ factorType: 'phone', phone });
  const challenge = await client.auth.mfa.challenge({ factorId: data!.id });
  await server.pool.query(
    `update auth.mfa_challenges set created_at = now() - interval '1 hour' where id = $1`,
    [challenge.data!.id],
  );
  const late = await client.auth.mfa.verify({
    factorId: data!.id,
    challengeId: challenge.data!.id,
    code: codeSentTo(phone)!,
  });
  expect(late.error?.code).toBe('mfa_challenge_expired');
});

test('enrolment refusals: no number, not E.164', async () => {
  const client = await signedIn();
  const { data } = await client.auth.getSession();
  const token = data.session!.access_token;
  const headers = { authorization: `Bearer ${token}` };
  const none = await call(server, 'POST', '/auth/v1/factors', { body: { factor_type: 'phone' }, headers });
  expect(none.status).toBe(400);
  expect(none.body.msg).toBe('Phone number required to enroll Phone factor');
  const bad = await call(server, 'POST', '/auth/v1/factors', {
    body: { factor_type: 'phone', phone: '+1555' },
    headers,
  });
  expect(bad.status).toBe(400);
  expect(bad.body.msg).toBe('Invalid phone number format (E.164 required)');
});

test('without an SMS provider phone factors are refused as GoTrue refuses them', async () => {
  const plain = await startTestServer();
  try {
    const client = plain.client();
    await client.auth.signUp({ email: `no-sms-${Date.now()}@example.com`, password: PASSWORD });
    const { error } = await client.auth.mfa.enroll({ factorType: 'phone', phone: uniquePhone() });
    expect(error?.code).toBe('mfa_phone_enroll_not_enabled');
  } finally {
    await plain.close();
  }
});
