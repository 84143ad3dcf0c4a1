// Anonymous sign-ins with the real supabase-js client: signInAnonymously creates a user with no
// address (is_anonymous in the user and the token, amr "anonymous") when ENABLE_ANONYMOUS_SIGN_INS
// is on, 422 anonymous_provider_disabled otherwise; a limit per address per hour; converting by
// adding an e-mail address (at once with autoconfirm, by the e-mailed link otherwise); RLS
// policies telling anonymous users apart; anonymous users cannot create workspaces.
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { followVerifyLink, startAuthMailbox, type AuthMailbox } from '../support/auth-mail.js';
import { call, startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let counter = 0;
const PASSWORD = 'correct horse battery';
const uniqueEmail = (label = 'anon') => `${label}${++counter}-${Date.now()}@example.com`;

beforeAll(async () => {
  server = await startTestServer({ ENABLE_ANONYMOUS_SIGN_INS: 'true' });
});
afterAll(async () => server?.close());

async function anonymous(target = server, data?: Record<string, unknown>) {
  const supabase = target.client();
  const { data: signedIn, error } = await supabase.auth.signInAnonymously(data ? { options: { data } } : {});
  expect(error).toBeNull();
  return { supabase, session: signedIn.session!, user: signedIn.user! };
}

const userCount = async (target: TestServer) =>
  Number((await target.pool.query<{ n: string }>('select count(*) as n from auth.users')).rows[0]!.n);

describe('signing in anonymously', () => {
  test('creates a user with no address, is_anonymous in the user and the token, amr anonymous', async () => {
    const { supabase, session, user } = await anonymous();
    expect(user).toMatchObject({
      is_anonymous: true,
      email: '',
      phone: '',
      role: 'authenticated',
      aud: 'authenticated',
      app_metadata: {},
      identities: [],
    });
    expect(session.refresh_token).toBeTruthy();
    const claims = decodeJwt(session.access_token);
    expect(claims).toMatchObject({
      sub: user.id,
      role: 'authenticated',
      is_anonymous: true,
      aal: 'aal1',
      email: '',
    });
    expect(claims.amr).toEqual([{ method: 'anonymous', timestamp: expect.any(Number) }]);
    expect((await supabase.auth.getSession()).data.session).not.toBeNull();
    const { data: fetched, error } = await supabase.auth.getUser();
    expect(error).toBeNull();
    expect(fetched.user).toMatchObject({ id: user.id, is_anonymous: true });
    // the session refreshes like any other, and stays anonymous
    const refreshed = await supabase.auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect(decodeJwt(refreshed.data.session!.access_token).is_anonymous).toBe(true);
  });

  test('keeps the user metadata it is given', async () => {
    const { user } = await anonymous(server, { theme: 'dark', visits: 1 });
    expect(user.user_metadata).toEqual({ theme: 'dark', visits: 1 });
  });

  test('an empty e-mail address is no address: GoTrue signs in anonymously', async () => {
    const res = await call(server, 'POST', '/auth/v1/signup', { body: { email: '', password: '' } });
    expect(res.status).toBe(200);
    expect((res.body.user as { is_anonymous: boolean }).is_anonymous).toBe(true);
  });

  test('a phone number without e-mail is a phone sign-up, which is disabled', async () => {
    const res = await call(server, 'POST', '/auth/v1/signup', { body: { phone: '+15555550100' } });
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('phone_provider_disabled');
  });

  test('/settings says anonymous users are enabled', async () => {
    const res = await call(server, 'GET', '/auth/v1/settings');
    expect((res.body.external as Record<string, boolean>).anonymous_users).toBe(true);
  });
});

test('second factors are for accounts: an anonymous user gets 403 no_authorization on every /factors route', async () => {
  const { supabase, session, user } = await anonymous();
  const enrolled = await supabase.auth.mfa.enroll({ factorType: 'totp' });
  expect(enrolled.data).toBeNull();
  expect(enrolled.error).toMatchObject({
    status: 403,
    code: 'no_authorization',
    message: 'Anonymous user not allowed to perform these actions',
  });
  const headers = { authorization: `Bearer ${session.access_token}` };
  const id = '00000000-0000-4000-8000-000000000000';
  for (const [method, path] of [
    ['POST', '/auth/v1/factors'],
    ['POST', `/auth/v1/factors/${id}/challenge`],
    ['POST', `/auth/v1/factors/${id}/verify`],
    ['DELETE', `/auth/v1/factors/${id}`],
  ] as const) {
    const res = await call(server, method, path, { headers, body: { factor_type: 'totp' } });
    expect(res.status, `${method} ${path}`).toBe(403);
    expect(res.body.error_code).toBe('no_authorization');
  }
  const stored = await server.pool.query('select 1 from auth.mfa_factors where user_id = $1', [user.id]);
  expect(stored.rowCount).toBe(0);
});

describe('when anonymous sign-ins are off (the default)', () => {
  let off: TestServer;
  beforeAll(async () => {
    off = await startTestServer();
  });
  afterAll(async () => off?.close());

  test('422 anonymous_provider_disabled, "Anonymous sign-ins are disabled", and nobody is created', async () => {
    const before = await userCount(off);
    const { data, error } = await off.client().auth.signInAnonymously();
    expect(data.session).toBeNull();
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('anonymous_provider_disabled');
    expect(error?.message).toBe('Anonymous sign-ins are disabled');
    expect(await userCount(off)).toBe(before);
    const settings = await call(off, 'GET', '/auth/v1/settings');
    expect((settings.body.external as Record<string, boolean>).anonymous_users).toBe(false);
  });

  test('e-mail sign-ups are unaffected', async () => {
    const res = await call(off, 'POST', '/auth/v1/signup', {
      body: { email: uniqueEmail(), password: PASSWORD },
    });
    expect(res.status).toBe(200);
  });
});

test('DISABLE_SIGNUP refuses anonymous sign-ins too (422 signup_disabled)', async () => {
  const closed = await startTestServer({ ENABLE_ANONYMOUS_SIGN_INS: 'true', DISABLE_SIGNUP: 'true' });
  try {
    const { error } = await closed.client().auth.signInAnonymously();
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('signup_disabled');
    expect(await userCount(closed)).toBe(0);
  } finally {
    await closed.close();
  }
});

test('RATE_LIMIT_ANONYMOUS_USERS per client address per hour: then 429 with Retry-After', async () => {
  const limited = await startTestServer({
    ENABLE_ANONYMOUS_SIGN_INS: 'true',
    RATE_LIMIT_ANONYMOUS_USERS: '2',
  });
  try {
    for (let i = 0; i < 2; i++) {
      expect((await call(limited, 'POST', '/auth/v1/signup', { body: {} })).status).toBe(200);
    }
    const refused = await call(limited, 'POST', '/auth/v1/signup', { body: {} });
    expect(refused.status).toBe(429);
    expect(refused.body.error_code).toBe('over_request_rate_limit');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await userCount(limited)).toBe(2);
    // e-mail sign-ups have their own limit
    const email = await call(limited, 'POST', '/auth/v1/signup', {
      body: { email: uniqueEmail(), password: PASSWORD },
    });
    expect(email.status).toBe(200);
  } finally {
    await limited.close();
  }
});

describe('becoming a permanent user (autoconfirm)', () => {
  test('updateUser({email}) makes the account permanent at once; a refreshed token says so', async () => {
    const { supabase, user } = await anonymous();
    const email = uniqueEmail('keep');
    const { data, error } = await supabase.auth.updateUser({ email });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ id: user.id, email, is_anonymous: false });
    expect(data.user?.email_confirmed_at).toBeTruthy();
    expect(data.user?.app_metadata).toMatchObject({ provider: 'email', providers: ['email'] });
    expect(data.user?.identities?.map((i) => i.provider)).toEqual(['email']);
    const { data: refreshed } = await supabase.auth.refreshSession();
    expect(decodeJwt(refreshed.session!.access_token)).toMatchObject({ is_anonymous: false, email });
    // then a password, and the account signs in like any other
    expect((await supabase.auth.updateUser({ password: PASSWORD })).error).toBeNull();
    const signIn = await server.client().auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data.user?.id).toBe(user.id);
  });

  test('e-mail and password in one call', async () => {
    const { supabase, user } = await anonymous();
    const email = uniqueEmail('both');
    const { data, error } = await supabase.auth.updateUser({ email, password: PASSWORD });
    expect(error).toBeNull();
    expect(data.user?.is_anonymous).toBe(false);
    const signIn = await server.client().auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.data.user?.id).toBe(user.id);
  });

  test('a password alone is refused (422 validation_failed) and nothing changes', async () => {
    const { supabase, user } = await anonymous();
    const { error } = await supabase.auth.updateUser({ password: PASSWORD });
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('validation_failed');
    expect(error?.message).toBe(
      'Updating password of an anonymous user without an email or phone is not allowed',
    );
    const row = await server.pool.query(
      'select encrypted_password, is_anonymous from auth.users where id = $1',
      [user.id],
    );
    expect(row.rows[0]).toEqual({ encrypted_password: null, is_anonymous: true });
  });

  test('an address that belongs to someone else is 422 email_exists, and the user stays anonymous', async () => {
    const taken = uniqueEmail('taken');
    await server.client().auth.signUp({ email: taken, password: PASSWORD });
    const { supabase, user } = await anonymous();
    const { error } = await supabase.auth.updateUser({ email: taken });
    expect(error?.code).toBe('email_exists');
    const row = await server.pool.query('select email, is_anonymous from auth.users where id = $1', [
      user.id,
    ]);
    expect(row.rows[0]).toEqual({ email: null, is_anonymous: true });
  });
});

describe('becoming a permanent user (confirmation by e-mail)', () => {
  let confirming: TestServer;
  let mailbox: AuthMailbox;
  beforeAll(async () => {
    confirming = await startTestServer({
      ENABLE_ANONYMOUS_SIGN_INS: 'true',
      AUTH_AUTOCONFIRM: 'false',
      RATE_LIMIT_EMAIL_SENT: '1000',
    });
    mailbox = await startAuthMailbox(confirming.pool);
  });
  afterAll(async () => {
    await mailbox?.close();
    await confirming?.close();
  });

  test('the address waits as new_email; the e-mailed link confirms it and ends the anonymity', async () => {
    const { supabase, user } = await anonymous(confirming);
    const email = uniqueEmail('link');
    const { data, error } = await supabase.auth.updateUser({ email });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ email: '', new_email: email, is_anonymous: true });
    const mail = await mailbox.latest(email);
    expect(mail.link).toContain('type=email_change');
    const landed = await followVerifyLink(confirming, mail.link!);
    expect(new URLSearchParams(landed.hash.slice(1)).get('access_token')).toBeTruthy();
    const { data: refreshed, error: refreshError } = await supabase.auth.refreshSession();
    expect(refreshError).toBeNull();
    expect(refreshed.user).toMatchObject({ id: user.id, email, is_anonymous: false });
    expect(refreshed.user?.identities?.map((i) => i.provider)).toEqual(['email']);
    expect(decodeJwt(refreshed.session!.access_token).is_anonymous).toBe(false);
  });

  test('or the e-mailed code, with verifyOtp type email_change', async () => {
    const { supabase, user } = await anonymous(confirming);
    const email = uniqueEmail('code');
    expect((await supabase.auth.updateUser({ email, password: PASSWORD })).error).toBeNull();
    const mail = await mailbox.latest(email);
    const verified = await confirming
      .client()
      .auth.verifyOtp({ email, token: mail.code!, type: 'email_change' });
    expect(verified.error).toBeNull();
    expect(verified.data.user).toMatchObject({ id: user.id, is_anonymous: false });
    const signIn = await confirming.client().auth.signInWithPassword({ email, password: PASSWORD });
    expect(signIn.data.user?.id).toBe(user.id);
  });
});

describe('row-level security', () => {
  test('anonymous users cannot create workspaces until they add an address', async () => {
    const { supabase } = await anonymous();
    const refused = await supabase.rpc('create_workspace', { name: 'Anonymous corner' });
    expect(refused.error?.code).toBe('42501');
    expect(refused.error?.message).toBe('Add an e-mail address to your account before creating a workspace');
    const direct = await supabase.from('workspaces').insert({ name: 'Direct', slug: `direct-${counter++}` });
    expect(direct.error).not.toBeNull();
    expect(
      Number(
        (await server.pool.query<{ n: string }>('select count(*) as n from public.workspaces')).rows[0]!.n,
      ),
    ).toBe(0);

    expect((await supabase.auth.updateUser({ email: uniqueEmail('ws') })).error).toBeNull();
    await supabase.auth.refreshSession();
    const created = await supabase.rpc('create_workspace', { name: 'Now permanent' });
    expect(created.error).toBeNull();
    expect((created.data as { name: string }).name).toBe('Now permanent');
  });

  test('a policy on auth.jwt()->>is_anonymous tells anonymous users apart (the documented example)', async () => {
    await server.pool.query(`
      create table public.guestbook (
        id bigint generated by default as identity primary key,
        author uuid not null default auth.uid(),
        body text not null
      );
      alter table public.guestbook enable row level security;
      create policy guestbook_read on public.guestbook for select to authenticated using (true);
      create policy guestbook_write on public.guestbook as permissive for insert to authenticated
        with check (author = auth.uid());
      create policy guestbook_permanent_only on public.guestbook as restrictive for insert to authenticated
        with check ((select (auth.jwt() ->> 'is_anonymous')::boolean) is false);
      grant select, insert on public.guestbook to authenticated;
      select pg_notify('tenantry_schema', 'reload');`);
    const { supabase } = await anonymous();
    const permanent = server.client();
    await permanent.auth.signUp({ email: uniqueEmail('guest'), password: PASSWORD });

    let ok = await permanent.from('guestbook').insert({ body: 'signed' });
    for (let i = 0; i < 50 && ok.error?.code === 'PGRST205'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      ok = await permanent.from('guestbook').insert({ body: 'signed' });
    }
    expect(ok.error).toBeNull();
    const refused = await supabase.from('guestbook').insert({ body: 'anonymous' });
    expect(refused.error?.code).toBe('42501');
    const read = await supabase.from('guestbook').select('body');
    expect(read.data).toEqual([{ body: 'signed' }]);
  });
});

test('the admin API shows anonymous users; confirming an address for one makes it permanent', async () => {
  const { user } = await anonymous();
  const admin = server.adminClient();
  const listed = await admin.auth.admin.getUserById(user.id);
  expect(listed.data.user?.is_anonymous).toBe(true);
  const email = uniqueEmail('admin');
  const updated = await admin.auth.admin.updateUserById(user.id, { email, email_confirm: true });
  expect(updated.error).toBeNull();
  expect(updated.data.user).toMatchObject({ email, is_anonymous: false });
});
