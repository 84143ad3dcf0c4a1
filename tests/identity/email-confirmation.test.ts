// Sign-up confirmation as GoTrue serves it, driven by the real supabase-js client with
// AUTH_AUTOCONFIRM=false and the e-mails read from a real SMTP server: the e-mail is written in
// the sign-up's transaction; its link (no apikey) redirects with the session in the fragment; its
// code and its token_hash verify by POST; resend keeps only the latest e-mail working, at most one
// a minute, answering alike for unknown addresses; and every hostile variation is refused with
// GoTrue's status and code.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { serveWithMailbox, startAuthMailbox, type AuthMail, type AuthMailbox } from '../support/auth-mail.js';
import { call, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let mailbox: AuthMailbox;

const SITE = 'https://app.example.com';
const CALLBACK = 'http://localhost:3000/welcome';

serveWithMailbox({ URI_ALLOW_LIST: 'http://localhost:3000/**' }, (started, mail) => {
  server = started;
  mailbox = mail;
});

let counter = 0;
const uniqueEmail = (label = 'user') => `${label}${++counter}-${Date.now()}@example.com`;
const PASSWORD = 'correct horse battery';

/** The e-mail's link, pointed at the test server (links use AUTH_URL, which tests cannot know). */
function onServer(link: string): string {
  const url = new URL(link);
  return `${server.url}${url.pathname}${url.search}`;
}

async function follow(link: string): Promise<{ status: number; location: URL }> {
  const res = await fetch(onServer(link), { redirect: 'manual' });
  return { status: res.status, location: new URL(res.headers.get('location')!) };
}

const fragment = (url: URL) => Object.fromEntries(new URLSearchParams(url.hash.slice(1)));
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());

async function signUpAndGetMail(email = uniqueEmail(), redirectTo: string | undefined = CALLBACK) {
  const { data, error } = await server.client().auth.signUp({
    email,
    password: PASSWORD,
    options: { data: { display_name: 'Ada <b>' }, ...(redirectTo ? { emailRedirectTo: redirectTo } : {}) },
  });
  expect(error).toBeNull();
  const mail = await mailbox.latest(email);
  return { email, data, mail };
}

const passwordSignIn = (email: string) =>
  server.client().auth.signInWithPassword({ email, password: PASSWORD });

describe('sign-up without autoconfirm', () => {
  test('answers the bare user and writes the confirmation e-mail in the same transaction', async () => {
    const email = uniqueEmail();
    const { data, error } = await server.client().auth.signUp({ email, password: PASSWORD });
    expect(error).toBeNull();
    expect(data.session).toBeNull();
    expect(data.user?.email).toBe(email);
    expect(data.user?.confirmation_sent_at).toBeTruthy();
    expect(data.user?.email_confirmed_at).toBeUndefined();
    expect(data.user?.identities).toHaveLength(1);
    const outbox = await server.pool.query<{ kind: string; user_created: boolean }>(
      `select o.kind, (o.xmin = u.xmin) as user_created from internal.outbox o, auth.users u
       where o.to_address = $1 and u.email = $1`,
      [email],
    );
    expect(outbox.rows).toEqual([{ kind: 'auth.confirmation', user_created: true }]);

    const mail = await mailbox.latest(email);
    expect(mail.subject).toBe('Confirm your e-mail address for Tenantry');
    expect(mail.link).toMatch(/\/auth\/v1\/verify\?token=[0-9a-f]{56}&type=signup&redirect_to=/);
    expect(mail.code).toMatch(/^\d{6}$/);
    expect(mail.html).toContain(mail.code!);
    expect(mail.html).toContain('Tenantry');

    const { error: signInError } = await passwordSignIn(email);
    expect(signInError?.status).toBe(400);
    expect(signInError?.code).toBe('email_not_confirmed');
  });

  test('the link, followed without an apikey, confirms and redirects with the session in the fragment', async () => {
    const { email, mail } = await signUpAndGetMail();
    expect(new URL(mail.link!).searchParams.get('redirect_to')).toBe(CALLBACK);
    const { status, location } = await follow(mail.link!);
    expect(status).toBe(303);
    expect(`${location.origin}${location.pathname}`).toBe(CALLBACK);
    const params = fragment(location);
    expect(Object.keys(params)).toEqual([
      'access_token',
      'expires_at',
      'expires_in',
      'refresh_token',
      'sb',
      'token_type',
      'type',
    ]);
    expect(params).toMatchObject({ token_type: 'bearer', expires_in: '3600', type: 'signup', sb: '' });
    expect(claimsOf(params.access_token!).amr[0].method).toBe('otp');

    const me = await server.clientWithToken(params.access_token!).auth.getUser(params.access_token);
    expect(me.data.user?.email).toBe(email);
    expect(me.data.user?.email_confirmed_at).toBeTruthy();
    expect(me.data.user?.identities?.[0]?.identity_data?.email_verified).toBe(true);
    const refreshed = await server.client().auth.refreshSession({ refresh_token: params.refresh_token! });
    expect(refreshed.error).toBeNull();
    expect((await passwordSignIn(email)).error).toBeNull();

    // Used once: the same link now lands on GoTrue's error fragment.
    const again = await follow(mail.link!);
    expect(again.status).toBe(303);
    expect(again.location.hash).toBe(
      '#error=access_denied&error_code=otp_expired&error_description=Email+link+is+invalid+or+has+expired&sb=',
    );
    expect(again.location.search).toBe('');
  });

  test('confirming marks the address verified where GoTrue does: the metadata and the e-mail identity', async () => {
    const { email, data: signedUp, mail } = await signUpAndGetMail();
    // until then the metadata is what the client sent, and the identity says unverified
    expect(signedUp.user?.user_metadata).toEqual({ display_name: 'Ada <b>' });
    expect(signedUp.user?.identities?.[0]?.identity_data).toMatchObject({ email, email_verified: false });
    const { data, error } = await server
      .client()
      .auth.verifyOtp({ email, token: mail.code!, type: 'signup' });
    expect(error).toBeNull();
    expect(data.user?.user_metadata).toEqual({ display_name: 'Ada <b>', email_verified: true });
    expect(data.user?.identities?.[0]?.identity_data).toMatchObject({ email, email_verified: true });
    // the service role's users: unconfirmed as given, confirmed later with email_confirm
    const admin = server.adminClient().auth.admin;
    const created = await admin.createUser({ email: uniqueEmail('admin'), user_metadata: { team: 'ops' } });
    expect(created.data.user?.user_metadata).toEqual({ team: 'ops' });
    const confirmed = await admin.updateUserById(created.data.user!.id, { email_confirm: true });
    expect(confirmed.data.user?.user_metadata).toEqual({ team: 'ops', email_verified: true });
    expect(confirmed.data.user?.identities?.[0]?.identity_data).toMatchObject({ email_verified: true });
  });

  test('verifyOtp with the e-mail and the code signs in once', async () => {
    const { email, mail } = await signUpAndGetMail();
    const supabase = server.client();
    const { data, error } = await supabase.auth.verifyOtp({ email, token: mail.code!, type: 'signup' });
    expect(error).toBeNull();
    expect(data.session?.access_token).toBeTruthy();
    expect(data.user?.email_confirmed_at).toBeTruthy();
    expect(claimsOf(data.session!.access_token).amr[0].method).toBe('otp');
    const again = await server.client().auth.verifyOtp({ email, token: mail.code!, type: 'signup' });
    expect(again.error?.status).toBe(403);
    expect(again.error?.code).toBe('otp_expired');
    expect(again.error?.message).toBe('Token has expired or is invalid');
  });

  test('verifyOtp with the token_hash of the link signs in; the wrong type is refused and burns nothing', async () => {
    const { email, mail } = await signUpAndGetMail();
    const tokenHash = new URL(mail.link!).searchParams.get('token')!;
    const wrongType = await server.client().auth.verifyOtp({ token_hash: tokenHash, type: 'recovery' });
    expect(wrongType.error?.status).toBe(403);
    expect(wrongType.error?.code).toBe('otp_expired');
    expect(wrongType.error?.message).toBe('Email link is invalid or has expired');
    const magic = await server.client().auth.verifyOtp({ token_hash: tokenHash, type: 'magiclink' });
    expect(magic.error?.code).toBe('otp_expired');
    const { data, error } = await server.client().auth.verifyOtp({ token_hash: tokenHash, type: 'signup' });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(email);
    const reused = await server.client().auth.verifyOtp({ token_hash: tokenHash, type: 'signup' });
    expect(reused.error?.code).toBe('otp_expired');
  });

  test('the "email" type takes the code of a confirmation e-mail too', async () => {
    const { email, mail } = await signUpAndGetMail();
    const { data, error } = await server.client().auth.verifyOtp({ email, token: mail.code!, type: 'email' });
    expect(error).toBeNull();
    expect(data.user?.email_confirmed_at).toBeTruthy();
  });

  test('POST /verify needs no apikey either (e-mail links have none)', async () => {
    const { mail } = await signUpAndGetMail();
    const res = await call(server, 'POST', '/auth/v1/verify', {
      apikey: null,
      body: { type: 'signup', token_hash: new URL(mail.link!).searchParams.get('token') },
    });
    expect(res.status).toBe(200);
    expect(res.body.access_token).toBeTruthy();
  });

  test("an already confirmed address gets GoTrue's obfuscated user, no e-mail and no change", async () => {
    const { email, mail } = await signUpAndGetMail();
    await follow(mail.link!);
    // Within the minute a repeated sign-up waits, confirmed or not, as a real e-mail would.
    const tooSoon = await server.client().auth.signUp({ email, password: 'another password' });
    expect(tooSoon.error?.code).toBe('over_email_send_rate_limit');
    await server.pool.query(`update internal.mail_frequency set sent_at = now() - interval '61 seconds'`);
    const before = await mailbox.mailsTo(email);
    const { data, error } = await server.client().auth.signUp({
      email,
      password: 'another password',
      options: { data: { sent: 'by someone else' } },
    });
    expect(error).toBeNull();
    expect(data.session).toBeNull();
    expect(data.user?.identities).toEqual([]);
    expect(data.user?.email).toBe(email);
    expect(data.user?.user_metadata).toEqual({ sent: 'by someone else' });
    const real = await server.pool.query('select id from auth.users where email = $1', [email]);
    expect(data.user?.id).not.toBe(real.rows[0].id);
    expect(await mailbox.mailsTo(email)).toHaveLength(before.length);
    expect((await passwordSignIn(email)).error).toBeNull();
  });

  test('signing up again while unconfirmed within a minute is refused with the wait; later it sends a new e-mail', async () => {
    const { email, mail } = await signUpAndGetMail();
    const again = await server.client().auth.signUp({ email, password: 'another password' });
    expect(again.error?.status).toBe(429);
    expect(again.error?.code).toBe('over_email_send_rate_limit');
    expect(again.error?.message).toMatch(
      /^For security purposes, you can only request this after \d+ seconds\.$/,
    );
    await server.pool.query(`update internal.mail_frequency set sent_at = now() - interval '61 seconds'`);
    const later = await server.client().auth.signUp({ email, password: 'another password' });
    expect(later.error).toBeNull();
    expect(later.data.user?.identities).toHaveLength(1);
    const mails = await mailbox.mailsTo(email);
    expect(mails).toHaveLength(2);
    // Only the newest e-mail works, and it brings the password of the sign-up that sent it: the
    // address was proved by following that e-mail, not the first (unproven-accounts.test.ts).
    expect((await follow(mail.link!)).location.hash).toContain('error_code=otp_expired');
    expect((await follow(mails[1]!.link!)).location.hash).toContain('access_token=');
    expect((await passwordSignIn(email)).error?.code).toBe('invalid_credentials');
    const latest = await server.client().auth.signInWithPassword({ email, password: 'another password' });
    expect(latest.error).toBeNull();
  });
});

describe('hostile verification', () => {
  test('an expired link or code is refused', async () => {
    const { email, mail } = await signUpAndGetMail();
    await server.pool.query(
      `update auth.one_time_tokens set expires_at = now() - interval '1 second'
       where user_id = (select id from auth.users where email = $1)`,
      [email],
    );
    const byCode = await server.client().auth.verifyOtp({ email, token: mail.code!, type: 'signup' });
    expect(byCode.error?.code).toBe('otp_expired');
    const byLink = await follow(mail.link!);
    expect(fragment(byLink.location)).toMatchObject({ error: 'access_denied', error_code: 'otp_expired' });
    const user = await server.pool.query('select email_confirmed_at from auth.users where email = $1', [
      email,
    ]);
    expect(user.rows[0].email_confirmed_at).toBeNull();
  });

  test('a tampered token is refused', async () => {
    const { mail } = await signUpAndGetMail();
    const token = new URL(mail.link!).searchParams.get('token')!;
    for (const tampered of [
      token.slice(0, -1) + (token.endsWith('a') ? 'b' : 'a'),
      token.toUpperCase(),
      `${token}0`,
      token.slice(1),
      `pkce_${token}`,
      "' or 1=1 --",
    ]) {
      const res = await server.client().auth.verifyOtp({ token_hash: tampered, type: 'signup' });
      expect(res.error?.status).toBe(403);
      expect(res.error?.code).toBe('otp_expired');
    }
  });

  test("a code checked against another user's e-mail is refused, and the owner's code still works", async () => {
    const a = await signUpAndGetMail();
    const b = await signUpAndGetMail();
    const crossed = await server
      .client()
      .auth.verifyOtp({ email: b.email, token: a.mail.code!, type: 'signup' });
    expect(crossed.error?.code).toBe('otp_expired');
    const unknown = await server.client().auth.verifyOtp({
      email: uniqueEmail('nobody'),
      token: a.mail.code!,
      type: 'signup',
    });
    expect(unknown.error?.code).toBe('otp_expired');
    const own = await server.client().auth.verifyOtp({ email: a.email, token: a.mail.code!, type: 'signup' });
    expect(own.error).toBeNull();
    expect(own.data.user?.email).toBe(a.email);
  });

  test('after five wrong codes the code is dead, the link still works', async () => {
    const { email, mail } = await signUpAndGetMail();
    const wrong = mail.code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) {
      const res = await server.client().auth.verifyOtp({ email, token: wrong, type: 'signup' });
      expect(res.error?.code).toBe('otp_expired');
    }
    const right = await server.client().auth.verifyOtp({ email, token: mail.code!, type: 'signup' });
    expect(right.error?.code).toBe('otp_expired');
    expect(fragment((await follow(mail.link!)).location).access_token).toBeTruthy();
  });

  test("bad requests are 400 validation_failed with GoTrue's words", async () => {
    const cases: [unknown, number, string][] = [
      [{ token_hash: 'x' }, 400, 'Verify requires a verification type'],
      [{ type: 'signup' }, 400, 'Verify requires either a token or a token hash'],
      [
        { type: 'signup', token: '1', token_hash: 'x' },
        400,
        'Verify requires either a token or a token hash',
      ],
      [
        { type: 'signup', token_hash: 'x', email: 'a@b.test' },
        400,
        'Only the token_hash and type should be provided',
      ],
      [
        { type: 'signup', token_hash: 'x', redirect_to: SITE },
        400,
        'Only the token_hash and type should be provided',
      ],
      [
        { type: 'signup', token: '123456' },
        400,
        'Only an email address or phone number should be provided on verify',
      ],
      [{ type: 'signup', token: '123456', email: 'not-an-email' }, 422, 'Invalid email format'],
      [{ type: 'teleport', token_hash: 'x' }, 400, 'Invalid email verification type'],
      [{ type: 'signup', token_hash: 42 }, 400, 'token_hash: must be a string'],
    ];
    for (const [body, status, message] of cases) {
      const res = await call(server, 'POST', '/auth/v1/verify', { body });
      expect({ status: res.status, msg: res.body.msg, code: res.body.error_code }).toEqual({
        status,
        msg: message,
        code: 'validation_failed',
      });
    }
    const phone = await server
      .client()
      .auth.verifyOtp({ phone: '+15555550100', token: '123456', type: 'sms' });
    expect(phone.error?.message).toBe('Token has expired or is invalid');
    const get = await call(server, 'GET', '/auth/v1/verify?type=signup', { apikey: null });
    expect(get.status).toBe(400);
    expect(get.body.msg).toBe('Verify requires a token or a token hash');
  });
});

describe('redirects', () => {
  test('a redirect_to outside the allow list falls back to the site URL, in the e-mail and when followed', async () => {
    const { mail } = await signUpAndGetMail(uniqueEmail(), 'https://evil.example.net/steal');
    expect(new URL(mail.link!).searchParams.get('redirect_to')).toBe(SITE);
    const { location } = await follow(mail.link!);
    expect(location.origin).toBe(SITE);
    expect(fragment(location).access_token).toBeTruthy();
  });

  test('editing the link to redirect elsewhere lands on the site URL', async () => {
    for (const hostile of [
      'https://evil.example.net/',
      'http://localhost:3000@evil.example.net/',
      'https://evil.example.net\\@localhost:3000/',
      '//evil.example.net/',
      'javascript:alert(document.cookie)',
      'http://localhost:3000.evil.example.net/',
      'http://localhost%3A3000@evil.example.net/',
    ]) {
      const { mail } = await signUpAndGetMail();
      const link = new URL(mail.link!);
      link.searchParams.set('redirect_to', hostile);
      const { location } = await follow(link.toString());
      expect(location.origin).toBe(SITE);
      expect(fragment(location).access_token).toBeTruthy();
    }
  });
});

describe('resend', () => {
  const resend = (email: string, type: 'signup' | 'email_change' = 'signup') =>
    server.client().auth.resend({ type, email, options: { emailRedirectTo: CALLBACK } });
  const allowAgain = () =>
    server.pool.query(`update internal.mail_frequency set sent_at = now() - interval '61 seconds'`);

  test('a new e-mail replaces the previous one; at most one a minute', async () => {
    const { email, mail } = await signUpAndGetMail();
    const tooSoon = await resend(email);
    expect(tooSoon.error?.status).toBe(429);
    expect(tooSoon.error?.code).toBe('over_email_send_rate_limit');
    expect(tooSoon.error?.message).toMatch(
      /^For security purposes, you can only request this after (59|60) seconds\.$/,
    );
    await allowAgain();
    expect((await resend(email)).error).toBeNull();
    const mails: AuthMail[] = await mailbox.mailsTo(email);
    expect(mails).toHaveLength(2);
    expect(mails[1]!.code).not.toBeNull();
    const old = await server.client().auth.verifyOtp({ email, token: mail.code!, type: 'signup' });
    if (mail.code !== mails[1]!.code) expect(old.error?.code).toBe('otp_expired');
    expect((await follow(mail.link!)).location.hash).toContain('error_code=otp_expired');
    expect(fragment((await follow(mails[1]!.link!)).location).type).toBe('signup');
  });

  test('unknown and confirmed addresses get the same answers, and no e-mail', async () => {
    const unknown = uniqueEmail('ghost');
    const { email: confirmed, mail } = await signUpAndGetMail();
    await follow(mail.link!);
    await allowAgain();
    for (const email of [unknown, confirmed]) {
      expect(await resend(email)).toEqual({ data: { user: null, session: null }, error: null });
      const second = await resend(email);
      expect(second.error?.code).toBe('over_email_send_rate_limit');
    }
    expect(await mailbox.mailsTo(unknown)).toHaveLength(0);
    expect(await mailbox.mailsTo(confirmed)).toHaveLength(1);
  });

  test('email_change resends both confirmations of a pending change (secure e-mail change)', async () => {
    const { email, mail } = await signUpAndGetMail();
    await follow(mail.link!);
    const next = uniqueEmail('next');
    await server.pool.query('update auth.users set email_change = $2 where email = $1', [email, next]);
    expect((await resend(email, 'email_change')).error).toBeNull();
    const toCurrent = (await mailbox.mailsTo(email)).at(-1)!;
    const toNew = await mailbox.latest(next);
    for (const m of [toCurrent, toNew]) {
      expect(m.subject).toBe('Confirm the change of your Tenantry e-mail address');
      expect(m.text).toContain(`from ${email} to ${next}`);
      expect(m.link).toContain('type=email_change');
    }
    expect(toCurrent.link).not.toBe(toNew.link);
    const nothingPending = uniqueEmail('none');
    expect((await resend(nothingPending, 'email_change')).error).toBeNull();
    expect(await mailbox.mailsTo(nothingPending)).toHaveLength(0);
  });

  test('bad requests', async () => {
    const cases: [unknown, string][] = [
      [
        { type: 'recovery', email: uniqueEmail() },
        'Missing one of these types: signup, email_change, sms, phone_change',
      ],
      [{ type: 'signup' }, 'Type provided requires an email address'],
      [{ type: 'signup', email: 'nope' }, 'Unable to validate email address: invalid format'],
      [
        { type: 'signup', email: uniqueEmail(), phone: '+15555550100' },
        'Only an email address or phone number should be provided.',
      ],
      [{ type: 'email_change' }, 'Missing email address or phone number'],
      [
        { type: 'signup', email: uniqueEmail(), code_challenge: 'x'.repeat(43) },
        'PKCE flow requires code_challenge_method and code_challenge',
      ],
    ];
    for (const [body, message] of cases) {
      const res = await call(server, 'POST', '/auth/v1/resend', { body });
      expect({ status: res.status, msg: res.body.msg }).toEqual({ status: 400, msg: message });
    }
    const noKey = await call(server, 'POST', '/auth/v1/resend', { apikey: null, body: { type: 'signup' } });
    expect(noKey.status).toBe(401);
  });
});

describe('limits on guessing and sending', () => {
  let limited: TestServer;
  let limitedMailbox: AuthMailbox;
  beforeAll(async () => {
    limited = await startTestServer({
      AUTH_AUTOCONFIRM: 'false',
      SITE_URL: SITE,
      RATE_LIMIT_OTP_FAILURES: '3',
      RATE_LIMIT_VERIFY_FAILURES: '6',
      RATE_LIMIT_EMAIL_SENT: '4',
    });
    limitedMailbox = await startAuthMailbox(limited.pool);
  });
  afterAll(async () => {
    await limitedMailbox?.close();
    await limited?.close();
  });

  test('wrong codes for one address are limited whoever sends them, then per client address', async () => {
    const email = uniqueEmail('target');
    await limited.client().auth.signUp({ email, password: PASSWORD });
    const mail = await limitedMailbox.latest(email);
    const wrong = mail.code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 3; i++) {
      expect(
        (await limited.client().auth.verifyOtp({ email, token: wrong, type: 'signup' })).error?.status,
      ).toBe(403);
    }
    // The fourth try is refused before the code is checked, even the right one.
    const blocked = await limited.client().auth.verifyOtp({ email, token: mail.code!, type: 'signup' });
    expect(blocked.error?.status).toBe(429);
    expect(blocked.error?.code).toBe('over_request_rate_limit');
    // Links are not codes: the e-mail's link still confirms.
    expect(fragment((await fetchManual(limited, mail.link!)).location).access_token).toBeTruthy();

    // Spraying other addresses from the same client address runs into the per-address limit.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await limited
        .client()
        .auth.verifyOtp({ email: uniqueEmail('spray'), token: wrong, type: 'signup' });
      statuses.push(res.error!.status!);
    }
    expect(statuses).toEqual([403, 403, 403, 429]);
  });

  test('the hourly e-mail limit refuses the sign-up whole: no account, no e-mail', async () => {
    let refusedEmail: string | null = null;
    for (let i = 0; i < 6 && !refusedEmail; i++) {
      const email = uniqueEmail('hourly');
      const { error } = await limited.client().auth.signUp({ email, password: PASSWORD });
      if (error) {
        expect(error.status).toBe(429);
        expect(error.code).toBe('over_email_send_rate_limit');
        expect(error.message).toBe('email rate limit exceeded');
        refusedEmail = email;
      }
    }
    expect(refusedEmail).not.toBeNull();
    const rows = await limited.pool.query('select 1 from auth.users where email = $1', [refusedEmail]);
    expect(rows.rowCount).toBe(0);
    expect(await limitedMailbox.mailsTo(refusedEmail!)).toHaveLength(0);
    const sent = await limited.pool.query(
      `select count(*)::int as n from internal.outbox where kind like 'auth.%'`,
    );
    expect(sent.rows[0].n).toBe(4);
  });
});

async function fetchManual(target: TestServer, link: string) {
  const url = new URL(link);
  const res = await fetch(`${target.url}${url.pathname}${url.search}`, { redirect: 'manual' });
  return { status: res.status, location: new URL(res.headers.get('location')!) };
}
