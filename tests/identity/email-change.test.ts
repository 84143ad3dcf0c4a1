// E-mail change with the real supabase-js client and e-mails read from a real SMTP server:
// updateUser({email}) only records new_email and e-mails both addresses (SECURE_EMAIL_CHANGE, the
// default); the first confirmation answers GoTrue's "Confirmation link accepted…", the second
// makes the new address the account's. Until then the old address signs in and the new one does
// not. Hostile cases: a taken address, replaced and reused links, codes against another address.
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
const PROFILE = `${SITE}/profile`;
const ACCEPTED = 'Confirmation link accepted. Please proceed to confirm link sent to the other email';

serveWithMailbox({}, (started, mail) => {
  server = started;
  mailbox = mail;
});

let counter = 0;
const uniqueEmail = (label = 'chg') => `${label}${++counter}-${Date.now()}@example.com`;
const PASSWORD = 'correct horse battery';
const allowAgain = () => allowAnotherEmail(server);

async function signedInUser() {
  const email = uniqueEmail();
  const { error } = await server
    .adminClient()
    .auth.admin.createUser({ email, password: PASSWORD, email_confirm: true });
  expect(error).toBeNull();
  const supabase = server.client();
  expect((await supabase.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
  return { email, supabase };
}

const follow = (link: string) => followVerifyLink(server, link);

const signIn = (email: string) => server.client().auth.signInWithPassword({ email, password: PASSWORD });

test('updateUser({email}): new_email only; both addresses must confirm; then the new address is in force', async () => {
  const { email, supabase } = await signedInUser();
  const next = uniqueEmail('new');
  const { data, error } = await supabase.auth.updateUser({ email: next }, { emailRedirectTo: PROFILE });
  expect(error).toBeNull();
  expect(data.user?.email).toBe(email);
  expect(data.user?.new_email).toBe(next);
  expect(data.user?.email_change_sent_at).toBeTruthy();

  const toOld = await mailbox.latest(email);
  const toNew = await mailbox.latest(next);
  for (const mail of [toOld, toNew]) {
    expect(mail.subject).toBe('Confirm the change of your Tenantry e-mail address');
    expect(mail.link).toContain('type=email_change');
    expect(mail.code).toMatch(/^\d{6}$/);
    expect(mail.text).toContain(next);
  }
  expect(toOld.link).not.toBe(toNew.link);

  // Until confirmed the old address is in force.
  expect((await signIn(email)).error).toBeNull();
  expect((await signIn(next)).error?.code).toBe('invalid_credentials');

  // The first confirmation: GoTrue's message, no session.
  const first = await follow(toNew.link!);
  expect(`${first.origin}${first.pathname}`).toBe(PROFILE);
  expect(new URLSearchParams(first.hash.slice(1)).get('message')).toBe(ACCEPTED);
  expect((await signIn(email)).error).toBeNull();

  // The second: the change takes effect and the link signs in.
  const second = await follow(toOld.link!);
  const params = new URLSearchParams(second.hash.slice(1));
  expect(params.get('type')).toBe('email_change');
  expect(params.get('access_token')).toBeTruthy();
  expect((await signIn(next)).error).toBeNull();
  expect((await signIn(email)).error?.code).toBe('invalid_credentials');
  const user = (await supabase.auth.getUser()).data.user!;
  expect(user.email).toBe(next);
  expect(user.new_email).toBeUndefined();
  expect(user.identities?.[0]?.identity_data?.email).toBe(next);
  // Both links are used up.
  expect(new URLSearchParams((await follow(toNew.link!)).hash.slice(1)).get('error_code')).toBe(
    'otp_expired',
  );
});

test('the codes work with verifyOtp type email_change, each against its own address', async () => {
  const { email, supabase } = await signedInUser();
  const next = uniqueEmail('new');
  expect((await supabase.auth.updateUser({ email: next })).error).toBeNull();
  const oldCode = (await mailbox.latest(email)).code!;
  const newCode = (await mailbox.latest(next)).code!;

  // A code checked against the other address does not work.
  const crossed = await server.client().auth.verifyOtp({ email, token: newCode, type: 'email_change' });
  if (newCode !== oldCode) expect(crossed.error?.code).toBe('otp_expired');
  const wrongType = await server.client().auth.verifyOtp({ email: next, token: newCode, type: 'email' });
  expect(wrongType.error?.code).toBe('otp_expired');

  // GoTrue's exact body for the first half.
  const firstHalf = await call(server, 'POST', '/auth/v1/verify', {
    body: { type: 'email_change', email: next, token: newCode },
  });
  expect(firstHalf.status).toBe(200);
  expect(firstHalf.body).toEqual({ msg: ACCEPTED, code: '200' });

  const { data, error } = await server
    .client()
    .auth.verifyOtp({ email, token: oldCode, type: 'email_change' });
  if (newCode === oldCode) return; // the crossed check above may have used the old code
  expect(error).toBeNull();
  expect(data.user?.email).toBe(next);
  expect(data.session?.access_token).toBeTruthy();
});

test('an address that belongs to another account: 422 email_exists, nothing recorded or sent', async () => {
  const { email, supabase } = await signedInUser();
  const other = await signedInUser();
  const { error } = await supabase.auth.updateUser({ email: other.email.toUpperCase() });
  expect(error?.status).toBe(422);
  expect(error?.code).toBe('email_exists');
  const user = (await supabase.auth.getUser()).data.user!;
  expect(user.new_email).toBeUndefined();
  expect(await mailbox.mailsTo(email)).toHaveLength(0);
  expect(await mailbox.mailsTo(other.email)).toHaveLength(0);
});

test('a replaced change voids its links; resend email_change sends fresh ones; one request a minute', async () => {
  const { email, supabase } = await signedInUser();
  const first = uniqueEmail('first');
  const second = uniqueEmail('second');
  expect((await supabase.auth.updateUser({ email: first })).error).toBeNull();
  const tooSoon = await supabase.auth.updateUser({ email: second });
  expect(tooSoon.error?.status).toBe(429);
  expect(tooSoon.error?.code).toBe('over_email_send_rate_limit');
  expect((await supabase.auth.getUser()).data.user?.new_email).toBe(first);

  await allowAgain();
  expect((await supabase.auth.updateUser({ email: second })).error).toBeNull();
  const stale = await mailbox.latest(first);
  expect(new URLSearchParams((await follow(stale.link!)).hash.slice(1)).get('error_code')).toBe(
    'otp_expired',
  );

  await allowAgain();
  const beforeResend = await mailbox.latest(second);
  expect((await server.client().auth.resend({ type: 'email_change', email })).error).toBeNull();
  const fresh = await mailbox.latest(second);
  expect(fresh.link).not.toBe(beforeResend.link);
  expect(new URLSearchParams((await follow(beforeResend.link!)).hash.slice(1)).get('error_code')).toBe(
    'otp_expired',
  );
  await follow(fresh.link!);
  await follow((await mailbox.latest(email)).link!);
  expect((await supabase.auth.refreshSession()).data.user?.email).toBe(second);
  // The address the change went to is now the account's; the first one is nobody's.
  expect((await signIn(second)).error).toBeNull();
  expect((await signIn(first)).error?.code).toBe('invalid_credentials');
});

test('another account taking the new address before the change completes: 422, nothing changes', async () => {
  const { email, supabase } = await signedInUser();
  const next = uniqueEmail('race');
  expect((await supabase.auth.updateUser({ email: next })).error).toBeNull();
  const toNew = await mailbox.latest(next);
  const toOld = await mailbox.latest(email);
  await follow(toNew.link!);
  const { error } = await server
    .adminClient()
    .auth.admin.createUser({ email: next, password: PASSWORD, email_confirm: true });
  expect(error).toBeNull();
  const landing = await follow(toOld.link!);
  expect(new URLSearchParams(landing.hash.slice(1)).get('error_code')).toBe('email_exists');
  expect((await signIn(email)).error).toBeNull();
});

test('bad input: a malformed address, no session', async () => {
  const { supabase } = await signedInUser();
  const bad = await supabase.auth.updateUser({ email: 'not-an-address' });
  expect(bad.error?.status).toBe(400);
  const anonymous = await call(server, 'PUT', '/auth/v1/user', { body: { email: uniqueEmail() } });
  expect(anonymous.status).toBe(401);
});
