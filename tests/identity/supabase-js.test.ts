// The identity service driven only through the real @supabase/supabase-js client, as an
// application would use it.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

let counter = 0;
const uniqueEmail = () => `user${++counter}-${Date.now()}@example.com`;

describe('sign-up and sign-in', () => {
  test('signUp returns a session and a normalised user', async () => {
    const supabase = server.client();
    const email = uniqueEmail();
    const { data, error } = await supabase.auth.signUp({
      email: `  ${email.toUpperCase()} `,
      password: 'correct horse battery',
      options: { data: { display_name: 'Ada' } },
    });
    expect(error).toBeNull();
    expect(data.session?.access_token).toMatch(/^eyJ/);
    expect(data.session?.token_type).toBe('bearer');
    expect(data.session?.expires_in).toBe(3600);
    expect(data.user?.email).toBe(email);
    // a confirmed address marks the metadata as GoTrue's User.Confirm does
    expect(data.user?.user_metadata).toEqual({ display_name: 'Ada', email_verified: true });
    expect(data.user?.identities?.[0]?.provider).toBe('email');
    expect(data.user?.email_confirmed_at).toBeTruthy();
  });

  test('signUp twice with the same e-mail reports user_already_exists', async () => {
    const email = uniqueEmail();
    await server.client().auth.signUp({ email, password: 'correct horse battery' });
    const { error } = await server.client().auth.signUp({ email, password: 'another password' });
    expect(error?.status).toBe(422);
    expect(error?.code).toBe('user_already_exists');
    expect(error?.message).toBe('User already registered');
  });

  test('a short password is a weak_password error with reasons', async () => {
    const { error } = await server.client().auth.signUp({ email: uniqueEmail(), password: 'short' });
    expect(error?.name).toBe('AuthWeakPasswordError');
    expect(error?.code).toBe('weak_password');
    expect((error as unknown as { reasons: string[] }).reasons).toEqual(['length']);
  });

  test('signInWithPassword succeeds and getUser answers for the session', async () => {
    const email = uniqueEmail();
    await server.client().auth.signUp({ email, password: 'correct horse battery' });
    const supabase = server.client();
    const { data, error } = await supabase.auth.signInWithPassword({
      email,
      password: 'correct horse battery',
    });
    expect(error).toBeNull();
    expect(data.user?.email).toBe(email);
    const me = await supabase.auth.getUser();
    expect(me.error).toBeNull();
    expect(me.data.user?.id).toBe(data.user?.id);
    expect(me.data.user?.last_sign_in_at).toBeTruthy();
  });

  test('wrong password and unknown user give the same invalid_credentials error', async () => {
    const email = uniqueEmail();
    await server.client().auth.signUp({ email, password: 'correct horse battery' });
    const wrong = await server.client().auth.signInWithPassword({ email, password: 'not the password' });
    const unknown = await server.client().auth.signInWithPassword({
      email: uniqueEmail(),
      password: 'not the password',
    });
    for (const { error, data } of [wrong, unknown]) {
      expect(data.session).toBeNull();
      expect(error?.status).toBe(400);
      expect(error?.code).toBe('invalid_credentials');
      expect(error?.message).toBe('Invalid login credentials');
    }
  });
});

describe('the signed-in user', () => {
  test('updateUser changes metadata and password; the new password signs in', async () => {
    const email = uniqueEmail();
    const supabase = server.client();
    await supabase.auth.signUp({ email, password: 'correct horse battery' });
    const meta = await supabase.auth.updateUser({ data: { theme: 'dark' } });
    expect(meta.error).toBeNull();
    expect(meta.data.user?.user_metadata).toEqual({ theme: 'dark', email_verified: true });

    const same = await supabase.auth.updateUser({ password: 'correct horse battery' });
    expect(same.error?.code).toBe('same_password');

    const changed = await supabase.auth.updateUser({ password: 'a brand new secret' });
    expect(changed.error).toBeNull();
    const old = await server.client().auth.signInWithPassword({ email, password: 'correct horse battery' });
    expect(old.error?.code).toBe('invalid_credentials');
    const fresh = await server.client().auth.signInWithPassword({ email, password: 'a brand new secret' });
    expect(fresh.error).toBeNull();
  });

  test('refreshSession rotates the refresh token and keeps the user', async () => {
    const supabase = server.client();
    const { data } = await supabase.auth.signUp({ email: uniqueEmail(), password: 'correct horse battery' });
    const first = data.session!;
    const refreshed = await supabase.auth.refreshSession();
    expect(refreshed.error).toBeNull();
    expect(refreshed.data.session?.refresh_token).not.toBe(first.refresh_token);
    expect(refreshed.data.session?.user.id).toBe(first.user.id);
    const me = await supabase.auth.getUser();
    expect(me.data.user?.id).toBe(first.user.id);
  });

  test('signOut ends the session: refresh and getUser fail afterwards', async () => {
    const supabase = server.client();
    const { data } = await supabase.auth.signUp({ email: uniqueEmail(), password: 'correct horse battery' });
    const session = data.session!;
    const out = await supabase.auth.signOut();
    expect(out.error).toBeNull();
    const other = server.client();
    const refresh = await other.auth.refreshSession({ refresh_token: session.refresh_token });
    expect(refresh.error?.status).toBe(400);
    expect(refresh.error?.code).toBe('refresh_token_not_found');
    const me = await other.auth.getUser(session.access_token);
    expect(me.error?.name).toBe('AuthSessionMissingError');
  });
});

describe('administration with the service-role key', () => {
  test('createUser, getUserById, updateUserById, listUsers and deleteUser', async () => {
    const admin = server.adminClient().auth.admin;
    const email = uniqueEmail();
    const created = await admin.createUser({
      email,
      password: 'created by admin',
      email_confirm: true,
      user_metadata: { team: 'ops' },
      app_metadata: { plan: 'pro' },
    });
    expect(created.error).toBeNull();
    const id = created.data.user!.id;
    expect(created.data.user?.app_metadata).toMatchObject({ provider: 'email', plan: 'pro' });

    const signIn = await server.client().auth.signInWithPassword({ email, password: 'created by admin' });
    expect(signIn.error).toBeNull();

    const fetched = await admin.getUserById(id);
    expect(fetched.data.user?.email).toBe(email);

    const updated = await admin.updateUserById(id, { user_metadata: { team: 'sales' } });
    expect(updated.data.user?.user_metadata).toEqual({ team: 'sales', email_verified: true });

    const list = await admin.listUsers({ page: 1, perPage: 1000 });
    expect(list.error).toBeNull();
    expect(list.data.users.some((u) => u.id === id)).toBe(true);

    const duplicate = await admin.createUser({ email, password: 'created by admin' });
    expect(duplicate.error?.code).toBe('email_exists');

    const deleted = await admin.deleteUser(id);
    expect(deleted.error).toBeNull();
    const gone = await admin.getUserById(id);
    expect(gone.error?.status).toBe(404);
    const afterDelete = await server
      .client()
      .auth.signInWithPassword({ email, password: 'created by admin' });
    expect(afterDelete.error?.code).toBe('invalid_credentials');
  });

  test('banning a user ends sessions and blocks sign-in', async () => {
    const admin = server.adminClient().auth.admin;
    const email = uniqueEmail();
    const created = await admin.createUser({ email, password: 'to be banned', email_confirm: true });
    const supabase = server.client();
    await supabase.auth.signInWithPassword({ email, password: 'to be banned' });
    await admin.updateUserById(created.data.user!.id, { ban_duration: '24h' });
    const again = await server.client().auth.signInWithPassword({ email, password: 'to be banned' });
    expect(again.error?.code).toBe('user_banned');
    const refresh = await supabase.auth.refreshSession();
    expect(refresh.error?.status).toBe(400);
  });

  test('a signed-in user cannot use the admin API', async () => {
    const supabase = server.client();
    const { data } = await supabase.auth.signUp({ email: uniqueEmail(), password: 'correct horse battery' });
    const asUser = server.clientWithToken(data.session!.access_token);
    const { error } = await asUser.auth.admin.listUsers();
    expect(error?.status).toBe(403);
    expect(error?.code).toBe('not_admin');
  });
});

describe('deleting an account that owns a workspace', () => {
  test('refused (409) while other members would be left without an owner', async () => {
    const admin = server.adminClient().auth.admin;
    const owner = server.client();
    const ownerSession = await owner.auth.signUp({ email: uniqueEmail(), password: 'correct horse battery' });
    const memberSession = await server
      .client()
      .auth.signUp({ email: uniqueEmail(), password: 'correct horse battery' });
    const ws = await owner.rpc('create_workspace', { name: 'Owned' });
    await server.pool.query(`insert into public.workspace_members values ($1, $2, 'member')`, [
      (ws.data as { id: string }).id,
      memberSession.data.user!.id,
    ]);
    const refused = await admin.deleteUser(ownerSession.data.user!.id);
    expect(refused.error?.status).toBe(409);
    expect(refused.error?.message).toContain('owner');
    // a user who owns nothing shared can go
    expect((await admin.deleteUser(memberSession.data.user!.id)).error).toBeNull();
  });
});
