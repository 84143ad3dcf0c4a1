// The e-mail flows with AUTH_AUTOCONFIRM on and SECURE_EMAIL_CHANGE off, with the real supabase-js
// client and e-mails read from a real SMTP server: signInWithOtp for a new address creates a
// confirmed account and sends the magic link at once; an e-mail change still waits for
// confirmation (GoTrue's rule for every permanent account), now from the new address alone.
import { expect, test } from 'vitest';
import { serveWithMailbox, type AuthMailbox } from '../support/auth-mail.js';
import { type TestServer } from '../support/server.js';

let server: TestServer;
let mailbox: AuthMailbox;

serveWithMailbox({ AUTH_AUTOCONFIRM: 'true', SECURE_EMAIL_CHANGE: 'false' }, (started, mail) => {
  server = started;
  mailbox = mail;
});

let counter = 0;
const uniqueEmail = (label = 'auto') => `${label}${++counter}-${Date.now()}@example.com`;
const PASSWORD = 'correct horse battery';

test('signInWithOtp for a new address: a confirmed account and the sign-in e-mail at once', async () => {
  const email = uniqueEmail('otp');
  const { data, error } = await server.client().auth.signInWithOtp({ email, options: { data: { a: 1 } } });
  expect(error).toBeNull();
  expect(data).toEqual({ user: null, session: null });
  const mail = await mailbox.latest(email);
  expect(mail.link).toContain('type=magiclink');
  const verified = await server.client().auth.verifyOtp({ email, token: mail.code!, type: 'email' });
  expect(verified.error).toBeNull();
  expect(verified.data.user?.user_metadata).toMatchObject({ a: 1 });
  expect(verified.data.user?.email_confirmed_at).toBeTruthy();
});

test('e-mail change waits for the one confirmation from the new address; reauthenticate answers no user', async () => {
  const email = uniqueEmail('chg');
  const supabase = server.client();
  expect((await supabase.auth.signUp({ email, password: PASSWORD })).error).toBeNull();
  const next = uniqueEmail('next');
  const { data, error } = await supabase.auth.updateUser({ email: next });
  expect(error).toBeNull();
  expect(data.user?.email).toBe(email);
  expect(data.user?.new_email).toBe(next);
  expect(await mailbox.mailsTo(email)).toHaveLength(0);
  const mail = await mailbox.latest(next);
  const verified = await server
    .client()
    .auth.verifyOtp({ email: next, token: mail.code!, type: 'email_change' });
  expect(verified.error).toBeNull();
  expect(verified.data.user?.email).toBe(next);
  expect(
    (await server.client().auth.signInWithPassword({ email: next, password: PASSWORD })).error,
  ).toBeNull();

  const reauth = await supabase.auth.reauthenticate();
  expect(reauth.error).toBeNull();
  expect(reauth.data).toEqual({ user: null, session: null });
});
