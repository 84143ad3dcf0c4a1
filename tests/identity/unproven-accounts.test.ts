// Sign-up squatting, without autoconfirm: a stranger signs up with the owner's address and their
// own password; the account waits for its address to be proved. Whatever e-mail the owner then
// follows first (their own sign-up's confirmation, by link or code, PKCE or not, a sign-in link, a
// recovery, an invitation, an administrator's generated link) gives the owner the account with
// nothing of the stranger's left: not the password, the profile data, the sessions, the provider
// identities or the pending e-mail change. Only what the owner's own flow set stays: the
// password of their own sign-up, none after a sign-in link. Real supabase-js, real SMTP, real
// Postgres.
import { createHash, randomBytes } from 'node:crypto';
import { expect, test } from 'vitest';
import { openSession } from '../../src/server/identity/sessions.js';
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
const CALLBACK = `${SITE}/auth/callback`;

serveWithMailbox({}, (started, mail) => {
  server = started;
  mailbox = mail;
});

let counter = 0;
const victimAddress = () => `owner${++counter}-${Date.now()}@example.com`;
const STRANGER_PASSWORD = 'stranger chose this one';
const OWNER_PASSWORD = 'owner chose this one';

const signIn = (email: string, password: string) =>
  server.client().auth.signInWithPassword({ email, password });

/**
 * The stranger's sign-up, plus what they might have attached to the account by any means: a
 * session, a provider identity, a pending e-mail change. Returns the account id and the session's
 * refresh token.
 */
async function squat(email: string): Promise<{ id: string; refreshToken: string }> {
  const { data, error } = await server.client().auth.signUp({
    email,
    password: STRANGER_PASSWORD,
    options: { data: { display_name: 'Mallory', planted: true } },
  });
  expect(error).toBeNull();
  const id = data.user!.id;
  const session = await openSession(server.pool, id, 'password', { userAgent: null, ip: null });
  await server.pool.query(
    `insert into auth.identities (user_id, provider, provider_id, identity_data)
     values ($1, 'github', $2, jsonb_build_object('sub', $2::text, 'email', 'mallory@example.net'))`,
    [id, `gh-${id}`],
  );
  await server.pool.query(`update auth.users set email_change = 'mallory@example.net' where id = $1`, [id]);
  // The stranger's sign-up e-mail went to the owner, who ignores it.
  await allowAnotherEmail(server);
  return { id, refreshToken: session.refreshToken };
}

/** What is left of the stranger in the account, after the owner's proof. */
async function expectStrangerGone(email: string, squatted: { id: string; refreshToken: string }) {
  expect((await signIn(email, STRANGER_PASSWORD)).error?.code).toBe('invalid_credentials');
  const refreshed = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', {
    body: { refresh_token: squatted.refreshToken },
  });
  expect(refreshed.status).toBe(400);
  const user = await server.pool.query<{
    email_confirmed_at: Date | null;
    email_change: string | null;
    raw_user_meta_data: Record<string, unknown>;
    raw_app_meta_data: Record<string, unknown>;
    providers: string[];
    display_name: string | null;
  }>(
    `select u.email_confirmed_at, u.email_change, u.raw_user_meta_data, u.raw_app_meta_data,
       array(select provider from auth.identities i where i.user_id = u.id order by provider) as providers,
       p.display_name
     from auth.users u join public.profiles p on p.id = u.id where u.id = $1`,
    [squatted.id],
  );
  const row = user.rows[0]!;
  expect(row.email_confirmed_at).not.toBeNull();
  expect(row.email_change).toBeNull();
  expect(row.raw_user_meta_data.planted).toBeUndefined();
  expect(row.raw_user_meta_data.display_name).not.toBe('Mallory');
  expect(row.display_name).not.toBe('Mallory');
  expect(row.providers).toEqual(['email']);
  expect(row.raw_app_meta_data.providers).toEqual(['email']);
  return row;
}

async function passwordOf(id: string): Promise<string | null> {
  const { rows } = await server.pool.query<{ encrypted_password: string | null }>(
    'select encrypted_password from auth.users where id = $1',
    [id],
  );
  return rows[0]!.encrypted_password;
}

test("the owner's own sign-up, confirmed from the inbox: the owner's password signs in, the stranger's does not", async () => {
  const email = victimAddress();
  const squatted = await squat(email);

  // The owner's sign-up gets GoTrue's answer for an unconfirmed address: the account (same id, its
  // e-mail identity), nothing obfuscated, nothing changed yet.
  const owner = await server.client().auth.signUp({
    email,
    password: OWNER_PASSWORD,
    options: { data: { display_name: 'Olive' } },
  });
  expect(owner.error).toBeNull();
  expect(owner.data.session).toBeNull();
  expect(owner.data.user?.id).toBe(squatted.id);
  expect(owner.data.user?.identities?.length).toBeGreaterThan(0);
  // Until the address is proved, neither password signs in (the owner's is not the account's yet).
  expect((await signIn(email, OWNER_PASSWORD)).error?.code).toBe('invalid_credentials');
  expect((await signIn(email, STRANGER_PASSWORD)).error?.code).toBe('email_not_confirmed');

  const landing = await followVerifyLink(server, (await mailbox.latest(email)).link!);
  expect(new URLSearchParams(landing.hash.slice(1)).get('access_token')).toBeTruthy();

  const row = await expectStrangerGone(email, squatted);
  expect(row.raw_user_meta_data.display_name).toBe('Olive');
  expect(row.display_name).toBe('Olive');
  const mine = await signIn(email, OWNER_PASSWORD);
  expect(mine.error).toBeNull();
  expect(mine.data.user?.id).toBe(squatted.id);
});

test("the owner's sign-up confirmed with the e-mail's code, and with a PKCE link exchanged by the owner's verifier", async () => {
  const byCode = victimAddress();
  const squattedByCode = await squat(byCode);
  await server.client().auth.signUp({ email: byCode, password: OWNER_PASSWORD });
  const mail = await mailbox.latest(byCode);
  const verified = await server.client().auth.verifyOtp({ email: byCode, token: mail.code!, type: 'email' });
  expect(verified.error).toBeNull();
  await expectStrangerGone(byCode, squattedByCode);
  expect((await signIn(byCode, OWNER_PASSWORD)).error).toBeNull();

  const byPkce = victimAddress();
  const squattedByPkce = await squat(byPkce);
  const verifier = randomBytes(32).toString('base64url');
  const signedUp = await call(server, 'POST', `/auth/v1/signup?redirect_to=${encodeURIComponent(CALLBACK)}`, {
    body: {
      email: byPkce,
      password: OWNER_PASSWORD,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 's256',
    },
  });
  expect(signedUp.status).toBe(200);
  const code = (await followVerifyLink(server, (await mailbox.latest(byPkce)).link!)).searchParams.get(
    'code',
  );
  expect(code).toBeTruthy();
  const exchanged = await call(server, 'POST', '/auth/v1/token?grant_type=pkce', {
    body: { auth_code: code, code_verifier: verifier },
  });
  expect(exchanged.status).toBe(200);
  await expectStrangerGone(byPkce, squattedByPkce);
  expect((await signIn(byPkce, OWNER_PASSWORD)).error).toBeNull();
});

test('a sign-in link (magic link, by link or by code) leaves no password at all, and none of the stranger', async () => {
  for (const how of ['link', 'code'] as const) {
    const email = victimAddress();
    const squatted = await squat(email);
    expect((await server.client().auth.signInWithOtp({ email })).error).toBeNull();
    const mail = await mailbox.latest(email);
    if (how === 'link') {
      const landing = await followVerifyLink(server, mail.link!);
      expect(new URLSearchParams(landing.hash.slice(1)).get('access_token')).toBeTruthy();
    } else {
      const { error } = await server.client().auth.verifyOtp({ email, token: mail.code!, type: 'email' });
      expect(error).toBeNull();
    }
    await expectStrangerGone(email, squatted);
    expect(await passwordOf(squatted.id)).toBeNull();
  }
});

test('a recovery link, an invitation and an administrator-generated link each claim the account the same way', async () => {
  const recovered = victimAddress();
  const squattedR = await squat(recovered);
  expect((await server.client().auth.resetPasswordForEmail(recovered)).error).toBeNull();
  const recovery = await followVerifyLink(server, (await mailbox.latest(recovered)).link!);
  expect(new URLSearchParams(recovery.hash.slice(1)).get('type')).toBe('recovery');
  await expectStrangerGone(recovered, squattedR);
  expect(await passwordOf(squattedR.id)).toBeNull();

  const invited = victimAddress();
  const squattedI = await squat(invited);
  const invitation = await server
    .adminClient()
    .auth.admin.inviteUserByEmail(invited, { data: { team: 'blue' } });
  expect(invitation.error).toBeNull();
  await followVerifyLink(server, (await mailbox.latest(invited)).link!);
  const row = await expectStrangerGone(invited, squattedI);
  expect(row.raw_user_meta_data.team).toBe('blue');
  expect(await passwordOf(squattedI.id)).toBeNull();

  const generated = victimAddress();
  const squattedG = await squat(generated);
  const link = await server.adminClient().auth.admin.generateLink({ type: 'magiclink', email: generated });
  expect(link.error).toBeNull();
  const { error } = await server
    .client()
    .auth.verifyOtp({ token_hash: link.data.properties!.hashed_token, type: 'magiclink' });
  expect(error).toBeNull();
  await expectStrangerGone(generated, squattedG);
  expect(await passwordOf(squattedG.id)).toBeNull();
});

test("a resent confirmation is still the sign-up's: its password stays, the stranger's does not come back", async () => {
  // No stranger: someone signs up, asks for the e-mail again, and confirms.
  const plain = victimAddress();
  expect((await server.client().auth.signUp({ email: plain, password: OWNER_PASSWORD })).error).toBeNull();
  await allowAnotherEmail(server);
  expect((await server.client().auth.resend({ type: 'signup', email: plain })).error).toBeNull();
  const mails = await mailbox.mailsTo(plain);
  expect(mails).toHaveLength(2);
  await followVerifyLink(server, mails[1]!.link!);
  expect((await signIn(plain, OWNER_PASSWORD)).error).toBeNull();

  // With a stranger first: the owner signs up, asks again, confirms the resent e-mail.
  const email = victimAddress();
  const squatted = await squat(email);
  await server.client().auth.signUp({ email, password: OWNER_PASSWORD });
  await allowAnotherEmail(server);
  expect((await server.client().auth.resend({ type: 'signup', email })).error).toBeNull();
  await followVerifyLink(server, (await mailbox.latest(email)).link!);
  await expectStrangerGone(email, squatted);
  expect((await signIn(email, OWNER_PASSWORD)).error).toBeNull();
});

test('a proof for an address already proved changes nothing: the password and other sessions stay', async () => {
  const email = victimAddress();
  const created = await server
    .adminClient()
    .auth.admin.createUser({ email, password: OWNER_PASSWORD, email_confirm: true });
  expect(created.error).toBeNull();
  const first = await signIn(email, OWNER_PASSWORD);
  expect(first.error).toBeNull();
  await server.client().auth.signInWithOtp({ email });
  await followVerifyLink(server, (await mailbox.latest(email)).link!);
  expect((await signIn(email, OWNER_PASSWORD)).error).toBeNull();
  const refreshed = await call(server, 'POST', '/auth/v1/token?grant_type=refresh_token', {
    body: { refresh_token: first.data.session!.refresh_token },
  });
  expect(refreshed.status).toBe(200);
});
