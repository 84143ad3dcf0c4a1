// Password recovery with the real supabase-js and @supabase/ssr clients and e-mails read from a
// real SMTP server: resetPasswordForEmail always answers alike, mails only existing accounts,
// its link or code signs the user in with amr `recovery`, updateUser sets the new password; the
// PKCE variant lands with ?code= and exchangeCodeForSession reports a recovery.
import { createServerClient } from '@supabase/ssr';
import ws from 'ws';
import { expect, test } from 'vitest';
import { EMAIL_REQUEST_FLOOR_MS } from '../../src/server/identity/uniform-timing.js';
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
const RESET_PAGE = `${SITE}/reset-password`;

serveWithMailbox({}, (started, mail) => {
  server = started;
  mailbox = mail;
});

let counter = 0;
const uniqueEmail = (label = 'rec') => `${label}${++counter}-${Date.now()}@example.com`;
const OLD = 'the old password';
const NEW = 'a brand new password';
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());
const allowAgain = () => allowAnotherEmail(server);

async function confirmedUser(): Promise<string> {
  const email = uniqueEmail();
  const { error } = await server
    .adminClient()
    .auth.admin.createUser({ email, password: OLD, email_confirm: true });
  expect(error).toBeNull();
  return email;
}

const follow = (link: string) => followVerifyLink(server, link);

const signIn = (email: string, password: string) =>
  server.client().auth.signInWithPassword({ email, password });

test('resetPasswordForEmail: the link signs in as a recovery; updateUser sets the new password', async () => {
  const email = await confirmedUser();
  const other = await signIn(email, OLD); // a session somewhere else, to be ended by the reset
  const { data, error } = await server.client().auth.resetPasswordForEmail(email, { redirectTo: RESET_PAGE });
  expect(error).toBeNull();
  expect(data).toEqual({});

  const mail = await mailbox.latest(email);
  expect(mail.subject).toBe('Reset your Tenantry password');
  expect(mail.link).toContain('type=recovery');
  expect(mail.code).toMatch(/^\d{6}$/);
  const landing = await follow(mail.link!);
  expect(`${landing.origin}${landing.pathname}`).toBe(RESET_PAGE);
  const params = Object.fromEntries(new URLSearchParams(landing.hash.slice(1)));
  expect(params.type).toBe('recovery');
  expect(claimsOf(params.access_token!).amr[0].method).toBe('recovery');

  const supabase = server.client();
  await supabase.auth.setSession({
    access_token: params.access_token!,
    refresh_token: params.refresh_token!,
  });
  const updated = await supabase.auth.updateUser({ password: NEW });
  expect(updated.error).toBeNull();
  expect((await signIn(email, OLD)).error?.code).toBe('invalid_credentials');
  expect((await signIn(email, NEW)).error).toBeNull();
  const stale = await server
    .client()
    .auth.refreshSession({ refresh_token: other.data.session!.refresh_token });
  expect(stale.error).not.toBeNull();
  // The link was used up.
  expect(new URLSearchParams((await follow(mail.link!)).hash.slice(1)).get('error_code')).toBe('otp_expired');
});

test('the code from the e-mail works with verifyOtp type recovery, once', async () => {
  const email = await confirmedUser();
  await server.client().auth.resetPasswordForEmail(email);
  const mail = await mailbox.latest(email);
  const supabase = server.client();
  const { data, error } = await supabase.auth.verifyOtp({ email, token: mail.code!, type: 'recovery' });
  expect(error).toBeNull();
  expect(claimsOf(data.session!.access_token).amr[0].method).toBe('recovery');
  expect((await supabase.auth.updateUser({ password: NEW })).error).toBeNull();
  expect((await signIn(email, NEW)).error).toBeNull();
  const again = await server.client().auth.verifyOtp({ email, token: mail.code!, type: 'recovery' });
  expect(again.error?.code).toBe('otp_expired');
  // A recovery code is not a confirmation code, nor the other way round.
  await allowAgain();
  await server.client().auth.resetPasswordForEmail(email);
  const next = await mailbox.latest(email);
  expect(
    (await server.client().auth.verifyOtp({ email, token: next.code!, type: 'signup' })).error?.code,
  ).toBe('otp_expired');
});

test('unknown addresses get the same answers and no e-mail; one e-mail a minute for everyone', async () => {
  const known = await confirmedUser();
  const unknown = uniqueEmail('ghost');
  for (const email of [known, unknown]) {
    const first = await call(server, 'POST', '/auth/v1/recover', { body: { email } });
    expect({ status: first.status, body: first.body }).toEqual({ status: 200, body: {} });
    const second = await call(server, 'POST', '/auth/v1/recover', { body: { email } });
    expect(second.status).toBe(429);
    expect(second.body.error_code).toBe('over_email_send_rate_limit');
    expect(second.body.msg).toMatch(
      /^For security purposes, you can only request this after (59|60) seconds\.$/,
    );
  }
  expect(await mailbox.mailsTo(known)).toHaveLength(1);
  expect(await mailbox.mailsTo(unknown)).toHaveLength(0);
});

test('recovering an unconfirmed account confirms its address (the link proves it) and drops the unproven password', async () => {
  const email = uniqueEmail('unconfirmed');
  await server.client().auth.signUp({ email, password: OLD });
  await allowAgain();
  await server.client().auth.resetPasswordForEmail(email);
  const mail = await mailbox.latest(email);
  expect(mail.subject).toBe('Reset your Tenantry password');
  const params = new URLSearchParams((await follow(mail.link!)).hash.slice(1));
  expect(params.get('access_token')).toBeTruthy();
  // Whoever signed up may not have owned the address; the recovery session sets the password.
  expect((await signIn(email, OLD)).error?.code).toBe('invalid_credentials');
  const supabase = server.client();
  await supabase.auth.setSession({
    access_token: params.get('access_token')!,
    refresh_token: params.get('refresh_token')!,
  });
  expect((await supabase.auth.updateUser({ password: NEW })).error).toBeNull();
  expect((await signIn(email, NEW)).error).toBeNull();
});

test('a recovery link of an address the account no longer has is void', async () => {
  const email = await confirmedUser();
  await server.client().auth.resetPasswordForEmail(email);
  const mail = await mailbox.latest(email);
  const renamed = uniqueEmail('renamed');
  await server.pool.query('update auth.users set email = $2 where email = $1', [email, renamed]);
  const res = await server.client().auth.verifyOtp({
    token_hash: new URL(mail.link!).searchParams.get('token')!,
    type: 'recovery',
  });
  expect(res.error?.code).toBe('otp_expired');
});

test('bad requests', async () => {
  for (const [body, message] of [
    [{}, 'Password recovery requires an email'],
    [{ email: 'nope' }, 'Unable to validate email address: invalid format'],
    [
      { email: uniqueEmail(), code_challenge_method: 's256' },
      'PKCE flow requires code_challenge_method and code_challenge',
    ],
  ] as const) {
    const res = await call(server, 'POST', '/auth/v1/recover', { body });
    expect({ status: res.status, msg: res.body.msg, code: res.body.error_code }).toEqual({
      status: 400,
      msg: message,
      code: 'validation_failed',
    });
  }
});

test('@supabase/ssr: the recovery link lands with ?code= and exchangeCodeForSession reports a recovery', async () => {
  const email = await confirmedUser();
  const jar = new Map<string, string>();
  const ssr = createServerClient(server.url, server.config.projectApiKey, {
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
  const events: string[] = [];
  ssr.auth.onAuthStateChange((event) => events.push(event));
  expect((await ssr.auth.resetPasswordForEmail(email, { redirectTo: RESET_PAGE })).error).toBeNull();
  const mail = await mailbox.latest(email);
  expect(new URL(mail.link!).searchParams.get('token')).toMatch(/^pkce_/);
  const landing = await follow(mail.link!);
  expect(`${landing.origin}${landing.pathname}`).toBe(RESET_PAGE);
  const { data, error } = await ssr.auth.exchangeCodeForSession(landing.searchParams.get('code')!);
  expect(error).toBeNull();
  expect((data as { redirectType?: string }).redirectType).toBe('recovery');
  expect(claimsOf(data.session!.access_token).amr[0].method).toBe('recovery');
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(events).toContain('PASSWORD_RECOVERY');
  expect((await ssr.auth.updateUser({ password: NEW })).error).toBeNull();
  expect((await signIn(email, NEW)).error).toBeNull();
});

test('known and unknown addresses take the same time: every e-mail request and sign-up answers after the floor', async () => {
  const floor = EMAIL_REQUEST_FLOOR_MS;
  const timed = async (path: string, body: Record<string, unknown>) => {
    const started = performance.now();
    const res = await call(server, 'POST', path, { body });
    return { status: res.status, ms: performance.now() - started };
  };
  const known = await confirmedUser();
  const samples: { status: number; ms: number }[] = [];
  for (const email of [known, uniqueEmail('ghost')]) {
    await allowAgain();
    samples.push(await timed('/auth/v1/recover', { email }));
    samples.push(await timed('/auth/v1/recover', { email })); // refused by the frequency limit
    await allowAgain();
    samples.push(await timed('/auth/v1/otp', { email, create_user: false }));
    await allowAgain();
    samples.push(await timed('/auth/v1/resend', { type: 'signup', email }));
    await allowAgain();
    samples.push(await timed('/auth/v1/signup', { email, password: 'some password here' }));
  }
  // Without the floor a known address took ~16 ms and an unknown one ~12 ms (median, measured).
  for (const sample of samples) expect(sample.ms).toBeGreaterThanOrEqual(floor - 1);
  expect(new Set(samples.map((s) => s.status)).size).toBeGreaterThan(1);
});
