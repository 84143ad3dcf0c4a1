// Password change proofs with the real supabase-js client and e-mails read from a real SMTP
// server, with SECURE_PASSWORD_CHANGE and REQUIRE_CURRENT_PASSWORD on: a session
// older than 24 hours needs the code reauthenticate() e-mails (400 reauthentication_needed, 422
// reauthentication_not_valid), every change names the current password (400
// current_password_required / current_password_invalid), except in a recovery session.
import { expect, test } from 'vitest';
import { allowAnotherEmail, serveWithMailbox, type AuthMailbox } from '../support/auth-mail.js';
import { call, type TestServer } from '../support/server.js';

let server: TestServer;
let mailbox: AuthMailbox;

serveWithMailbox({ SECURE_PASSWORD_CHANGE: 'true', REQUIRE_CURRENT_PASSWORD: 'true' }, (started, mail) => {
  server = started;
  mailbox = mail;
});

let counter = 0;
const uniqueEmail = () => `reauth${++counter}-${Date.now()}@example.com`;
const OLD = 'the old password';
const NEW = 'a brand new password';
const allowAgain = () => allowAnotherEmail(server);

async function signedInUser() {
  const email = uniqueEmail();
  const { error } = await server
    .adminClient()
    .auth.admin.createUser({ email, password: OLD, email_confirm: true });
  expect(error).toBeNull();
  const supabase = server.client();
  const signIn = await supabase.auth.signInWithPassword({ email, password: OLD });
  expect(signIn.error).toBeNull();
  return { email, supabase, sessionId: signIn.data.session!.access_token };
}

const ageSessions = (email: string) =>
  server.pool.query(
    `update auth.sessions set created_at = now() - interval '25 hours'
     where user_id = (select id from auth.users where email = $1)`,
    [email],
  );

const canSignIn = async (email: string, password: string) =>
  !(await server.client().auth.signInWithPassword({ email, password })).error;

test('a recent session changes the password with the current one; without or with a wrong one it is refused', async () => {
  const { email, supabase } = await signedInUser();
  const missing = await supabase.auth.updateUser({ password: NEW });
  expect(missing.error?.status).toBe(400);
  expect(missing.error?.code).toBe('current_password_required');
  const wrong = await supabase.auth.updateUser({ password: NEW, current_password: 'not it' });
  expect(wrong.error?.status).toBe(400);
  expect(wrong.error?.code).toBe('current_password_invalid');
  expect(await canSignIn(email, OLD)).toBe(true);
  const ok = await supabase.auth.updateUser({ password: NEW, current_password: OLD });
  expect(ok.error).toBeNull();
  expect(await canSignIn(email, NEW)).toBe(true);
  expect(await canSignIn(email, OLD)).toBe(false);
});

test('guessing the current password is slowed like guessing at sign-in, and changes nothing', async () => {
  const { email, supabase } = await signedInUser();
  const codes: (string | undefined)[] = [];
  for (let i = 0; i < 6; i++) {
    const guess = await supabase.auth.updateUser({ password: NEW, current_password: `guess ${i}` });
    codes.push(guess.error?.code);
  }
  // Five failures from this address, then it must wait (RATE_LIMIT_SIGNIN_FAILURES, default 5).
  expect(codes.slice(0, 5)).toEqual(Array(5).fill('current_password_invalid'));
  expect(codes[5]).toBe('over_request_rate_limit');
  const right = await supabase.auth.updateUser({ password: NEW, current_password: OLD });
  expect(right.error?.status).toBe(429);
  await server.pool.query('delete from internal.sign_in_failures where email = $1', [email]);
  expect(await canSignIn(email, OLD)).toBe(true);
});

test('a session older than 24 hours needs the e-mailed nonce: needed, wrong, then accepted once', async () => {
  const { email, supabase } = await signedInUser();
  await ageSessions(email);
  const needed = await supabase.auth.updateUser({ password: NEW, current_password: OLD });
  expect(needed.error?.status).toBe(400);
  expect(needed.error?.code).toBe('reauthentication_needed');

  const noCode = await supabase.auth.updateUser({ password: NEW, current_password: OLD, nonce: '123456' });
  expect(noCode.error?.status).toBe(422);
  expect(noCode.error?.code).toBe('reauthentication_not_valid');

  const sent = await supabase.auth.reauthenticate();
  expect(sent.error).toBeNull();
  const mail = await mailbox.latest(email);
  expect(mail.subject).toBe('Your Tenantry verification code');
  expect(mail.code).toMatch(/^\d{6}$/);
  expect(mail.link).toBeNull();
  const user = (await supabase.auth.getUser()).data.user!;
  expect((user as unknown as Record<string, unknown>).reauthentication_sent_at).toBeTruthy();

  const wrongCode = mail.code === '000000' ? '000001' : '000000';
  const wrong = await supabase.auth.updateUser({ password: NEW, current_password: OLD, nonce: wrongCode });
  expect(wrong.error?.code).toBe('reauthentication_not_valid');
  expect(await canSignIn(email, OLD)).toBe(true);

  const ok = await supabase.auth.updateUser({ password: NEW, current_password: OLD, nonce: mail.code! });
  expect(ok.error).toBeNull();
  expect(await canSignIn(email, NEW)).toBe(true);
  // The code was used up.
  const again = await supabase.auth.updateUser({
    password: 'yet another password',
    current_password: NEW,
    nonce: mail.code!,
  });
  expect(again.error?.code).toBe('reauthentication_not_valid');
});

test("a reauthentication code is not a sign-in code, and one user's code does not work for another", async () => {
  const alice = await signedInUser();
  const bob = await signedInUser();
  await ageSessions(bob.email);
  expect((await alice.supabase.auth.reauthenticate()).error).toBeNull();
  const code = (await mailbox.latest(alice.email)).code!;
  const asSignIn = await server.client().auth.verifyOtp({ email: alice.email, token: code, type: 'email' });
  expect(asSignIn.error?.code).toBe('otp_expired');
  const stolen = await bob.supabase.auth.updateUser({ password: NEW, current_password: OLD, nonce: code });
  expect(stolen.error?.code).toBe('reauthentication_not_valid');
});

test('reauthenticate: one e-mail a minute; refused without a session or for an unconfirmed address', async () => {
  const { email, supabase } = await signedInUser();
  expect((await supabase.auth.reauthenticate()).error).toBeNull();
  const tooSoon = await supabase.auth.reauthenticate();
  expect(tooSoon.error?.status).toBe(429);
  expect(tooSoon.error?.code).toBe('over_email_send_rate_limit');
  expect(await mailbox.mailsTo(email)).toHaveLength(1);
  await allowAgain();

  const anonymous = await call(server, 'GET', '/auth/v1/reauthenticate');
  expect(anonymous.status).toBe(401);

  const unconfirmed = uniqueEmail();
  await server.adminClient().auth.admin.createUser({ email: unconfirmed, password: OLD });
  await server.pool.query('update auth.users set email_confirmed_at = null where email = $1', [unconfirmed]);
  const { data } = await server
    .adminClient()
    .auth.admin.generateLink({ type: 'magiclink', email: unconfirmed });
  const session = await server
    .client()
    .auth.verifyOtp({ token_hash: data.properties!.hashed_token, type: 'magiclink' });
  expect(session.error).toBeNull();
  // The magic link confirmed the address, so unconfirm it again to see the refusal.
  await server.pool.query('update auth.users set email_confirmed_at = null where email = $1', [unconfirmed]);
  const refused = await call(server, 'GET', '/auth/v1/reauthenticate', {
    headers: { authorization: `Bearer ${session.data.session!.access_token}` },
  });
  expect(refused.status).toBe(422);
  expect(refused.body.error_code).toBe('email_not_confirmed');
});

test('a recovery session sets a new password without the current one (but still needs a recent sign-in)', async () => {
  const { email } = await signedInUser();
  expect((await server.client().auth.resetPasswordForEmail(email)).error).toBeNull();
  const mail = await mailbox.latest(email);
  const supabase = server.client();
  expect((await supabase.auth.verifyOtp({ email, token: mail.code!, type: 'recovery' })).error).toBeNull();
  expect((await supabase.auth.updateUser({ password: NEW })).error).toBeNull();
  expect(await canSignIn(email, NEW)).toBe(true);
});
