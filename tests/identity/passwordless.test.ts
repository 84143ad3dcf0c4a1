// Passwordless sign-in with the real supabase-js and @supabase/ssr clients and e-mails read from a
// real SMTP server: signInWithOtp sends one e-mail with a magic link and a code; either signs in
// (verify types magiclink / email); an unknown address becomes an account (confirmation e-mail,
// verify type signup) unless shouldCreateUser is false (then nothing is sent, and the answer is
// the known address's, where GoTrue answers 422 otp_disabled); one e-mail a minute per address; a
// PKCE client's link lands with ?code=.
import { createServerClient } from '@supabase/ssr';
import ws from 'ws';
import { expect, test } from 'vitest';
import {
  allowAnotherEmail,
  followVerifyLink,
  serveWithMailbox,
  type AuthMailbox,
} from '../support/auth-mail.js';
import { call, type TestServer } from '../support/server.js';

let server: TestServer;
let mailbox: AuthMailbox;
const SITE = 'https://app.example.com';
const WELCOME = `${SITE}/welcome`;

serveWithMailbox({}, (started, mail) => {
  server = started;
  mailbox = mail;
});

let counter = 0;
const uniqueEmail = (label = 'otp') => `${label}${++counter}-${Date.now()}@example.com`;
const PASSWORD = 'correct horse battery';
const allowAgain = () => allowAnotherEmail(server);

async function confirmedUser(): Promise<string> {
  const email = uniqueEmail();
  const { error } = await server
    .adminClient()
    .auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
  expect(error).toBeNull();
  return email;
}

const follow = (link: string) => followVerifyLink(server, link);

test('signInWithOtp: one e-mail with a link and a code; the link signs in (type magiclink)', async () => {
  const email = await confirmedUser();
  const { data, error } = await server
    .client()
    .auth.signInWithOtp({ email, options: { emailRedirectTo: WELCOME, shouldCreateUser: false } });
  expect(error).toBeNull();
  expect(data).toEqual({ user: null, session: null });

  const mails = await mailbox.mailsTo(email);
  expect(mails).toHaveLength(1);
  const mail = mails[0]!;
  expect(mail.subject).toBe('Your Tenantry sign-in link');
  expect(mail.link).toContain('type=magiclink');
  expect(mail.code).toMatch(/^\d{6}$/);
  expect(mail.html).toContain(mail.code);

  const landing = await follow(mail.link!);
  expect(`${landing.origin}${landing.pathname}`).toBe(WELCOME);
  const params = new URLSearchParams(landing.hash.slice(1));
  expect(params.get('type')).toBe('magiclink');
  const supabase = server.client();
  await supabase.auth.setSession({
    access_token: params.get('access_token')!,
    refresh_token: params.get('refresh_token')!,
  });
  expect((await supabase.auth.getUser()).data.user?.email).toBe(email);
  // Used up: the same link now lands with GoTrue's error.
  expect(new URLSearchParams((await follow(mail.link!)).hash.slice(1)).get('error_code')).toBe('otp_expired');
});

test("the e-mail's code signs in with verifyOtp type email, once; a wrong code does not", async () => {
  const email = await confirmedUser();
  await server.client().auth.signInWithOtp({ email });
  const mail = await mailbox.latest(email);
  const wrong = mail.code === '000000' ? '000001' : '000000';
  const bad = await server.client().auth.verifyOtp({ email, token: wrong, type: 'email' });
  expect(bad.error?.status).toBe(403);
  expect(bad.error?.code).toBe('otp_expired');

  const supabase = server.client();
  const { data, error } = await supabase.auth.verifyOtp({ email, token: mail.code!, type: 'email' });
  expect(error).toBeNull();
  expect(data.session?.user.email).toBe(email);
  expect((await supabase.auth.getUser()).data.user?.id).toBe(data.user?.id);
  const again = await server.client().auth.verifyOtp({ email, token: mail.code!, type: 'email' });
  expect(again.error?.code).toBe('otp_expired');
});

test('the token_hash of the link works with verifyOtp type magiclink, and not as another type', async () => {
  const email = await confirmedUser();
  await server.client().auth.signInWithOtp({ email });
  const mail = await mailbox.latest(email);
  const tokenHash = new URL(mail.link!).searchParams.get('token')!;
  const asRecovery = await server.client().auth.verifyOtp({ token_hash: tokenHash, type: 'signup' });
  expect(asRecovery.error?.code).toBe('otp_expired');
  const tampered = await server.client().auth.verifyOtp({
    token_hash: `${tokenHash.slice(0, -1)}${tokenHash.endsWith('0') ? '1' : '0'}`,
    type: 'magiclink',
  });
  expect(tampered.error?.code).toBe('otp_expired');
  const { data, error } = await server.client().auth.verifyOtp({ token_hash: tokenHash, type: 'magiclink' });
  expect(error).toBeNull();
  expect(data.user?.email).toBe(email);
});

test('an unknown address becomes an unconfirmed account; its confirmation e-mail confirms and signs in', async () => {
  const email = uniqueEmail('new');
  const { error } = await server
    .client()
    .auth.signInWithOtp({ email, options: { data: { display_name: 'Nova' }, emailRedirectTo: WELCOME } });
  expect(error).toBeNull();
  const created = await server.pool.query<{
    email_confirmed_at: Date | null;
    encrypted_password: string | null;
  }>('select email_confirmed_at, encrypted_password from auth.users where email = $1', [email]);
  expect(created.rows[0]).toEqual({ email_confirmed_at: null, encrypted_password: null });
  const mail = await mailbox.latest(email);
  expect(mail.link).toContain('type=signup');
  expect(mail.code).toMatch(/^\d{6}$/);

  const { data, error: verifyError } = await server
    .client()
    .auth.verifyOtp({ email, token: mail.code!, type: 'email' });
  expect(verifyError).toBeNull();
  expect(data.user?.email_confirmed_at).toBeTruthy();
  expect(data.user?.user_metadata).toMatchObject({ display_name: 'Nova' });
  // Signing in with no password set is refused like a wrong password.
  const pw = await server.client().auth.signInWithPassword({ email, password: 'anything at all' });
  expect(pw.error?.code).toBe('invalid_credentials');
});

test("POST /magiclink, GoTrue's older entry: a known address gets a link, an unknown one an account", async () => {
  const known = await confirmedUser();
  const sent = await call(server, 'POST', '/auth/v1/magiclink', { body: { email: known } });
  expect(sent.status).toBe(200);
  expect(sent.body).toEqual({});
  const link = await mailbox.latest(known);
  expect(link.link).toContain('type=magiclink');
  const landing = await follow(link.link!);
  expect(landing.hash).toContain('access_token=');

  const unknown = uniqueEmail('magic');
  const created = await call(server, 'POST', '/auth/v1/magiclink', {
    body: { email: unknown, data: { display_name: 'Mags' } },
  });
  expect(created.status).toBe(200);
  const row = await server.pool.query<{ raw_user_meta_data: Record<string, unknown> }>(
    'select raw_user_meta_data from auth.users where email = $1',
    [unknown],
  );
  expect(row.rows[0]?.raw_user_meta_data).toMatchObject({ display_name: 'Mags' });
  expect((await mailbox.latest(unknown)).link).toContain('type=signup');

  // No address: GoTrue's own words; a bad one: 400; the one-a-minute limit holds here too.
  const none = await call(server, 'POST', '/auth/v1/magiclink', { body: {} });
  expect(none.status).toBe(422);
  expect(none.body).toMatchObject({
    error_code: 'validation_failed',
    msg: 'Password recovery requires an email',
  });
  expect(
    (await call(server, 'POST', '/auth/v1/magiclink', { body: { email: 'not-an-address' } })).status,
  ).toBe(400);
  const again = await call(server, 'POST', '/auth/v1/magiclink', { body: { email: known } });
  expect(again.status).toBe(429);
  expect(again.body.error_code).toBe('over_email_send_rate_limit');
  // The slot is the address's, whichever entry took it: /otp first, then /magiclink waits.
  const other = await confirmedUser();
  expect((await server.client().auth.signInWithOtp({ email: other })).error).toBeNull();
  const after = await call(server, 'POST', '/auth/v1/magiclink', { body: { email: other } });
  expect(after.status).toBe(429);
  expect(after.body.error_code).toBe('over_email_send_rate_limit');
});

test('shouldCreateUser false: known and unknown addresses get the same answer; only the known one gets mail', async () => {
  const known = await confirmedUser();
  const ghost = uniqueEmail('ghost');
  const ask = (email: string) =>
    call(server, 'POST', '/auth/v1/otp', { body: { email, create_user: false } });
  const [toKnown, toGhost] = [await ask(known), await ask(ghost)];
  expect(toGhost.status).toBe(200);
  expect({ status: toGhost.status, body: toGhost.body }).toEqual({
    status: toKnown.status,
    body: toKnown.body,
  });
  expect(
    (
      await server
        .client()
        .auth.signInWithOtp({ email: uniqueEmail('ghost'), options: { shouldCreateUser: false } })
    ).error,
  ).toBeNull();
  const rows = await server.pool.query('select 1 from auth.users where email = $1', [ghost]);
  expect(rows.rowCount).toBe(0);
  expect(await mailbox.mailsTo(ghost)).toHaveLength(0);
  expect(await mailbox.mailsTo(known)).toHaveLength(1);
  // A second request within the minute is refused alike, so the limit tells nothing either.
  const [again, ghostAgain] = [await ask(known), await ask(ghost)];
  expect(ghostAgain.status).toBe(429);
  expect(ghostAgain.body.error_code).toBe(again.body.error_code);
  expect(ghostAgain.status).toBe(again.status);
});

test('one e-mail a minute per address: 429 over_email_send_rate_limit, shared with recovery', async () => {
  const email = await confirmedUser();
  expect((await server.client().auth.signInWithOtp({ email })).error).toBeNull();
  const second = await server.client().auth.signInWithOtp({ email });
  expect(second.error?.status).toBe(429);
  expect(second.error?.code).toBe('over_email_send_rate_limit');
  expect(second.error?.message).toMatch(
    /^For security purposes, you can only request this after \d+ seconds\.$/,
  );
  const recovery = await server.client().auth.resetPasswordForEmail(email);
  expect(recovery.error?.code).toBe('over_email_send_rate_limit');
  expect(await mailbox.mailsTo(email)).toHaveLength(1);
  await allowAgain();
  expect((await server.client().auth.signInWithOtp({ email })).error).toBeNull();
  // Only the newest e-mail's code works.
  const [first, latest] = await mailbox.mailsTo(email);
  if (first!.code !== latest!.code) {
    const old = await server.client().auth.verifyOtp({ email, token: first!.code!, type: 'email' });
    expect(old.error?.code).toBe('otp_expired');
  }
  expect(
    (await server.client().auth.verifyOtp({ email, token: latest!.code!, type: 'email' })).error,
  ).toBeNull();
});

test('@supabase/ssr (PKCE): the magic link lands with ?code= and exchangeCodeForSession signs in', async () => {
  const email = await confirmedUser();
  const jar = new Map<string, string>();
  const client = createServerClient(server.url, server.config.projectApiKey, {
    cookies: {
      getAll: () => [...jar].map(([name, value]) => ({ name, value })),
      setAll: (cookies) => {
        for (const { name, value } of cookies) {
          if (value) jar.set(name, value);
          else jar.delete(name);
        }
      },
    },
    realtime: { transport: ws as unknown as typeof WebSocket },
  });
  expect(
    (await client.auth.signInWithOtp({ email, options: { emailRedirectTo: WELCOME } })).error,
  ).toBeNull();
  const mail = await mailbox.latest(email);
  expect(new URL(mail.link!).searchParams.get('token')).toMatch(/^pkce_/);
  const landing = await follow(mail.link!);
  const code = landing.searchParams.get('code');
  expect(code).toBeTruthy();
  const { data, error } = await client.auth.exchangeCodeForSession(code!);
  expect(error).toBeNull();
  expect(data.user?.email).toBe(email);
  const amr = JSON.parse(Buffer.from(data.session!.access_token.split('.')[1]!, 'base64url').toString()).amr;
  expect(amr[0].method).toBe('magiclink');
});

test('bad input: no address, both address and phone, a bad address, a phone, a bad challenge', async () => {
  const cases: [unknown, number, string][] = [
    [{}, 400, 'validation_failed'],
    [{ email: 'a@example.com', phone: '+15555550100' }, 400, 'validation_failed'],
    [{ email: 'not-an-address' }, 400, 'validation_failed'],
    [{ phone: '+15555550100' }, 400, 'phone_provider_disabled'],
    [
      { email: 'a@example.com', code_challenge: 'short', code_challenge_method: 's256' },
      400,
      'validation_failed',
    ],
    [{ email: 'a@example.com', create_user: 'yes' }, 400, 'validation_failed'],
  ];
  for (const [body, status, code] of cases) {
    const res = await call(server, 'POST', '/auth/v1/otp', { body });
    expect({ body, status: res.status, code: res.body.error_code }).toEqual({ body, status, code });
  }
  const rows = await server.pool.query(`select 1 from auth.users where email = 'a@example.com'`);
  expect(rows.rowCount).toBe(0);
});

test('hostile: an open redirect falls back to the site URL; an expired link and code are refused', async () => {
  const email = await confirmedUser();
  await server
    .client()
    .auth.signInWithOtp({ email, options: { emailRedirectTo: 'https://evil.example.net/steal' } });
  const mail = await mailbox.latest(email);
  expect(new URL(mail.link!).searchParams.get('redirect_to')).toBe(SITE);
  await server.pool.query(
    `update auth.one_time_tokens set expires_at = now() - interval '1 second'
     where user_id = (select id from auth.users where email = $1)`,
    [email],
  );
  const landing = await follow(mail.link!);
  expect(landing.origin).toBe(SITE);
  expect(new URLSearchParams(landing.hash.slice(1)).get('error_code')).toBe('otp_expired');
  const code = await server.client().auth.verifyOtp({ email, token: mail.code!, type: 'email' });
  expect(code.error?.code).toBe('otp_expired');
});
