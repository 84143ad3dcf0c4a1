// Answers supabase-js reads as GoTrue gives them: the user on an autoconfirmed sign-up, the admin
// user list's order, phone numbers on /verify, and the providers that are not offered (Web3, SAML).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

let counter = 0;
const uniqueEmail = () => `conformance${++counter}-${Date.now()}@example.com`;

describe('sign-up with autoconfirm', () => {
  test('the user in the answer carries last_sign_in_at, as getUser does afterwards', async () => {
    const supabase = server.client();
    const { data, error } = await supabase.auth.signUp({
      email: uniqueEmail(),
      password: 'correct horse battery',
    });
    expect(error).toBeNull();
    expect(data.user?.last_sign_in_at).toEqual(expect.any(String));
    expect(data.session?.user.last_sign_in_at).toEqual(expect.any(String));
    const stored = await server.pool.query<{ last_sign_in_at: Date | null }>(
      'select last_sign_in_at from auth.users where id = $1',
      [data.user!.id],
    );
    expect(stored.rows[0]?.last_sign_in_at).not.toBeNull();
  });
});

describe('the admin user list', () => {
  test('lists the newest users first, so one just created is on the first page', async () => {
    await server.pool.query(
      `insert into auth.users (email, created_at)
       select 'older' || n || '@example.com', now() - interval '1 day' from generate_series(1, 60) n`,
    );
    const admin = server.adminClient().auth.admin;
    const email = uniqueEmail();
    const created = await admin.createUser({ email, password: 'correct horse battery' });
    expect(created.error).toBeNull();
    const { data, error } = await admin.listUsers();
    expect(error).toBeNull();
    expect(data.users).toHaveLength(50);
    expect(data.users[0]?.email).toBe(email);
    const times = data.users.map((u) => Date.parse(u.created_at));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });
});

describe('verifying a phone code', () => {
  test('a number that is not E.164 is refused as GoTrue refuses it', async () => {
    const { data, error } = await server.client().auth.verifyOtp({
      phone: '15551234567-invalid',
      token: '123456',
      type: 'sms',
    });
    expect(data.user).toBeNull();
    expect(error?.status).toBe(400);
    expect(error?.code).toBe('validation_failed');
    expect(error?.message).toBe('Invalid phone number format (E.164 required)');
  });

  test('a well-formed number (+ and spaces allowed) gets the wrong-code answer', async () => {
    const { error } = await server.client().auth.verifyOtp({
      phone: '+1 555 123 4567',
      token: '123456',
      type: 'sms',
    });
    expect(error?.status).toBe(403);
    expect(error?.code).toBe('otp_expired');
  });
});

describe('providers that are not offered', () => {
  test('signInWithWeb3 is told the Web3 provider is disabled (422)', async () => {
    const { data, error } = await server.client().auth.signInWithWeb3({
      chain: 'solana',
      message: 'test message',
      signature: new Uint8Array([1, 2, 3]),
    });
    expect(data.session).toBeNull();
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('web3_provider_disabled');
    expect(error?.message).toBe('Web3 provider is disabled');
  });

  test('signInWithSSO is told SAML 2.0 is disabled (404), by provider or by domain', async () => {
    for (const params of [{ providerId: 'some-provider' }, { domain: 'example.com' }]) {
      const { data, error } = await server.client().auth.signInWithSSO(params);
      expect(data).toBeNull();
      expect(error?.status).toBe(404);
      expect(error?.code).toBe('saml_provider_disabled');
      expect(error?.message).toBe('SAML 2.0 is disabled');
    }
  });

  test('the SAML endpoints answer the same, and still need the apikey', async () => {
    const res = await call(server, 'GET', '/auth/v1/sso/saml/metadata');
    expect(res.status).toBe(404);
    expect(res.body.error_code).toBe('saml_provider_disabled');
    const without = await call(server, 'POST', '/auth/v1/sso', { body: {}, apikey: null });
    expect(without.status).toBe(401);
  });
});
