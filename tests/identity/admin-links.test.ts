// Administrator e-mail actions with the real supabase-js admin client and e-mails read from a
// real SMTP server: auth.admin.generateLink answers GoTrue's shape (auth-js splits it into
// `properties` and `user`), sends nothing, and its links and codes work with /verify;
// auth.admin.inviteUserByEmail creates the invited account and e-mails the invitation, whose link
// signs the invitee in to set a password. Only the service role may call either.
import { expect, test } from 'vitest';
import { followVerifyLink, serveWithMailbox, type AuthMailbox } from '../support/auth-mail.js';
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
const uniqueEmail = (label = 'adm') => `${label}${++counter}-${Date.now()}@example.com`;
const PASSWORD = 'correct horse battery';
const NEW = 'a brand new password';
const admin = () => server.adminClient().auth.admin;

async function confirmedUser(): Promise<string> {
  const email = uniqueEmail();
  const { error } = await admin().createUser({ email, password: PASSWORD, email_confirm: true });
  expect(error).toBeNull();
  return email;
}

const follow = (link: string) => followVerifyLink(server, link);

const signIn = (email: string, password = PASSWORD) =>
  server.client().auth.signInWithPassword({ email, password });

test('generateLink magiclink: GoTrue shape, no e-mail, the link signs in, the code works instead', async () => {
  const email = await confirmedUser();
  const { data, error } = await admin().generateLink({
    type: 'magiclink',
    email,
    options: { redirectTo: WELCOME },
  });
  expect(error).toBeNull();
  expect(data.user?.email).toBe(email);
  expect(data.user?.recovery_sent_at).toBeTruthy();
  const props = data.properties!;
  expect(props.verification_type).toBe('magiclink');
  expect(props.redirect_to).toBe(WELCOME);
  expect(props.email_otp).toMatch(/^\d{6}$/);
  const link = new URL(props.action_link);
  expect(link.pathname).toBe('/auth/v1/verify');
  expect(link.searchParams.get('token')).toBe(props.hashed_token);
  expect(link.searchParams.get('type')).toBe('magiclink');
  expect(link.searchParams.get('redirect_to')).toBe(WELCOME);
  expect(await mailbox.mailsTo(email)).toHaveLength(0);

  const landing = await follow(props.action_link);
  expect(`${landing.origin}${landing.pathname}`).toBe(WELCOME);
  expect(new URLSearchParams(landing.hash.slice(1)).get('access_token')).toBeTruthy();

  const again = await admin().generateLink({ type: 'magiclink', email });
  const viaCode = await server
    .client()
    .auth.verifyOtp({ email, token: again.data.properties!.email_otp, type: 'email' });
  expect(viaCode.error).toBeNull();
  // No frequency limit on generated links: an administrator delivers them.
  expect((await admin().generateLink({ type: 'recovery', email })).error).toBeNull();
});

test('generateLink signup creates an unconfirmed account whose link confirms it; magiclink for a stranger is a signup', async () => {
  const email = uniqueEmail('sign');
  const { data, error } = await admin().generateLink({
    type: 'signup',
    email,
    password: PASSWORD,
    options: { data: { plan: 'pro' } },
  });
  expect(error).toBeNull();
  expect(data.user?.email_confirmed_at).toBeUndefined();
  expect(data.user?.user_metadata).toMatchObject({ plan: 'pro' });
  expect(data.properties?.verification_type).toBe('signup');
  expect((await signIn(email)).error?.code).toBe('email_not_confirmed');
  const verified = await server
    .client()
    .auth.verifyOtp({ token_hash: data.properties!.hashed_token, type: 'signup' });
  expect(verified.error).toBeNull();
  expect((await signIn(email)).error).toBeNull();
  // Again for the now confirmed account: GoTrue's 422 email_exists.
  const taken = await admin().generateLink({ type: 'signup', email, password: PASSWORD });
  expect(taken.error?.status).toBe(422);
  expect(taken.error?.code).toBe('email_exists');

  // An unconfirmed account needs no password: its metadata is updated and a new link issued.
  const pending = uniqueEmail('pending');
  expect((await admin().createUser({ email: pending, password: PASSWORD })).error).toBeNull();
  const relink = await admin().generateLink({
    type: 'signup',
    email: pending,
    password: '',
    options: { data: { step: 2 } },
  });
  expect(relink.error).toBeNull();
  expect(relink.data.user?.user_metadata).toMatchObject({ step: 2 });

  const stranger = uniqueEmail('stranger');
  const magic = await admin().generateLink({ type: 'magiclink', email: stranger });
  expect(magic.error).toBeNull();
  expect(magic.data.properties?.verification_type).toBe('signup');
  expect(new URL(magic.data.properties!.action_link).searchParams.get('type')).toBe('signup');
});

test('generateLink recovery and email change links; an unknown account is 404', async () => {
  const email = await confirmedUser();
  const recovery = await admin().generateLink({ type: 'recovery', email });
  expect(recovery.error).toBeNull();
  const supabase = server.client();
  const session = await supabase.auth.verifyOtp({
    token_hash: recovery.data.properties!.hashed_token,
    type: 'recovery',
  });
  expect(session.error).toBeNull();
  expect((await supabase.auth.updateUser({ password: NEW })).error).toBeNull();
  expect((await signIn(email, NEW)).error).toBeNull();

  const next = uniqueEmail('next');
  const toNew = await admin().generateLink({ type: 'email_change_new', email, newEmail: next });
  expect(toNew.error).toBeNull();
  expect(toNew.data.user?.new_email).toBe(next);
  expect(toNew.data.properties?.verification_type).toBe('email_change_new');
  expect(new URL(toNew.data.properties!.action_link).searchParams.get('type')).toBe('email_change');
  const toCurrent = await admin().generateLink({ type: 'email_change_current', email, newEmail: next });
  expect(toCurrent.error).toBeNull();
  const first = await follow(toNew.data.properties!.action_link);
  expect(new URLSearchParams(first.hash.slice(1)).get('message')).toMatch(/^Confirmation link accepted/);
  const second = await follow(toCurrent.data.properties!.action_link);
  expect(new URLSearchParams(second.hash.slice(1)).get('type')).toBe('email_change');
  expect((await signIn(next, NEW)).error).toBeNull();
  expect(await mailbox.mailsTo(email)).toHaveLength(0);
  expect(await mailbox.mailsTo(next)).toHaveLength(0);

  for (const type of ['recovery', 'email_change_new'] as const) {
    const res = await call(server, 'POST', '/auth/v1/admin/generate_link', {
      headers: { authorization: `Bearer ${server.config.serviceRoleKey}` },
      body: { type, email: uniqueEmail('nobody'), new_email: uniqueEmail('x') },
    });
    expect({ type, status: res.status, code: res.body.error_code }).toEqual({
      type,
      status: 404,
      code: 'user_not_found',
    });
  }
});

test('generateLink refuses: a non-admin, an unknown type, a taken new address, a missing password, an open redirect', async () => {
  const email = await confirmedUser();
  const other = await confirmedUser();
  const user = server.client();
  await user.auth.signInWithPassword({ email, password: PASSWORD });
  const session = (await user.auth.getSession()).data.session!;
  const asUser = await call(server, 'POST', '/auth/v1/admin/generate_link', {
    headers: { authorization: `Bearer ${session.access_token}` },
    body: { type: 'magiclink', email: other },
  });
  expect(asUser.status).toBe(403);
  expect(asUser.body.error_code).toBe('not_admin');

  const headers = { authorization: `Bearer ${server.config.serviceRoleKey}` };
  const cases: [Record<string, unknown>, number, string][] = [
    [{ type: 'sms', email }, 400, 'validation_failed'],
    [{ type: 'email_change_new', email, new_email: other }, 422, 'email_exists'],
    [{ type: 'email_change_new', email, new_email: 'nope' }, 400, 'validation_failed'],
    [{ type: 'signup', email: uniqueEmail('nopw') }, 422, 'validation_failed'],
    [{ type: 'magiclink', email: 'not-an-address' }, 400, 'validation_failed'],
  ];
  for (const [body, status, code] of cases) {
    const res = await call(server, 'POST', '/auth/v1/admin/generate_link', { headers, body });
    expect({ body, status: res.status, code: res.body.error_code }).toEqual({ body, status, code });
  }
  const open = await admin().generateLink({
    type: 'magiclink',
    email,
    options: { redirectTo: 'https://evil.example.net/steal' },
  });
  expect(open.data.properties?.redirect_to).toBe(SITE);
  expect(new URL(open.data.properties!.action_link).searchParams.get('redirect_to')).toBe(SITE);
});

test('inviteUserByEmail: the invited account, the e-mail, its link signs in, updateUser sets the password', async () => {
  const email = uniqueEmail('invitee');
  const { data, error } = await admin().inviteUserByEmail(email, {
    data: { team: 'blue' },
    redirectTo: WELCOME,
  });
  expect(error).toBeNull();
  expect(data.user?.email).toBe(email);
  expect(data.user?.invited_at).toBeTruthy();
  expect(data.user?.email_confirmed_at).toBeUndefined();
  expect(data.user?.user_metadata).toMatchObject({ team: 'blue' });

  const mail = await mailbox.latest(email);
  expect(mail.link).toContain('type=invite');
  expect(mail.html).not.toContain('<script');
  const landing = await follow(mail.link!);
  expect(`${landing.origin}${landing.pathname}`).toBe(WELCOME);
  const params = new URLSearchParams(landing.hash.slice(1));
  expect(params.get('type')).toBe('invite');
  const supabase = server.client();
  await supabase.auth.setSession({
    access_token: params.get('access_token')!,
    refresh_token: params.get('refresh_token')!,
  });
  expect((await supabase.auth.updateUser({ password: NEW })).error).toBeNull();
  expect((await signIn(email, NEW)).error).toBeNull();

  // Confirmed now: inviting again is GoTrue's 422 email_exists.
  const again = await admin().inviteUserByEmail(email);
  expect(again.error?.status).toBe(422);
  expect(again.error?.code).toBe('email_exists');
});

test('invite: an unconfirmed account is invited again (new link, old one void); a non-admin gets 403', async () => {
  const email = uniqueEmail('twice');
  expect((await admin().inviteUserByEmail(email)).error).toBeNull();
  expect((await admin().inviteUserByEmail(email)).error).toBeNull();
  const [first, second] = await mailbox.mailsTo(email);
  expect(second).toBeDefined();
  expect(new URLSearchParams((await follow(first!.link!)).hash.slice(1)).get('error_code')).toBe(
    'otp_expired',
  );
  expect(new URLSearchParams((await follow(second!.link!)).hash.slice(1)).get('access_token')).toBeTruthy();

  const anon = await call(server, 'POST', '/auth/v1/invite', { body: { email: uniqueEmail('x') } });
  expect(anon.status).toBe(403);
  expect(anon.body.error_code).toBe('not_admin');
  const user = await confirmedUser();
  const client = server.client();
  await client.auth.signInWithPassword({ email: user, password: PASSWORD });
  const asUser = await call(server, 'POST', '/auth/v1/invite', {
    headers: { authorization: `Bearer ${(await client.auth.getSession()).data.session!.access_token}` },
    body: { email: uniqueEmail('y') },
  });
  expect(asUser.status).toBe(403);
  expect(asUser.body.error_code).toBe('not_admin');
});
