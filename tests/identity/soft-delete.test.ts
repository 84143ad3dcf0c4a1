// The service role's soft deletion (supabase-js `auth.admin.deleteUser(id, true)`), as GoTrue does
// it: the row stays with deleted_at, so the application's references to the user hold, while
// everything that identifies or admits the person goes. The tenancy rules of a hard deletion
// apply to the account's workspaces.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { call, startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace } from '../support/workspaces.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

const PASSWORD = 'correct horse battery';
const admin = () => server.adminClient().auth.admin;
const row = async (sql: string, values: unknown[]) => (await server.pool.query(sql, values)).rows;

test('the row stays, marked deleted; the address, password, metadata and sessions are gone', async () => {
  const person = await signUp(server, 'soft');
  await admin().updateUserById(person.id, {
    user_metadata: { full_name: 'Ada Lovelace' },
    app_metadata: { plan: 'team' },
  });
  await server.pool.query(
    `update public.profiles set display_name = 'Ada', avatar_url = 'https://example.com/a.png' where id = $1`,
    [person.id],
  );

  const { data, error } = await admin().deleteUser(person.id, true);
  expect(error).toBeNull();
  expect(data).toEqual({ user: {} });

  const { data: kept, error: readError } = await admin().getUserById(person.id);
  expect(readError).toBeNull();
  const user = kept.user!;
  expect(user.id).toBe(person.id);
  expect(Date.parse(user.deleted_at!)).toBeGreaterThan(Date.now() - 60_000);
  expect(user.email).toMatch(/^[0-9a-f]{64}$/);
  expect(user.email).not.toContain(person.email);
  expect(user.user_metadata).toEqual({});
  expect(user.app_metadata).toEqual({});
  expect(user.identities![0]!.identity_data).toEqual({});
  expect(user.identities![0]!.id).not.toBe(person.id);

  const [stored] = await row('select encrypted_password from auth.users where id = $1', [person.id]);
  expect(stored).toEqual({ encrypted_password: null });
  expect(await row('select id from auth.sessions where user_id = $1', [person.id])).toEqual([]);
  expect(
    await row('select display_name, avatar_url, email from public.profiles where id = $1', [person.id]),
  ).toEqual([{ display_name: null, avatar_url: null, email: user.email }]);
  expect(
    await row('select digest_frequency from public.notification_preferences where user_id = $1', [person.id]),
  ).toEqual([{ digest_frequency: 'off' }]);

  // the person cannot come back in: not with the password, not with the old session
  const signIn = await server.client().auth.signInWithPassword({ email: person.email, password: PASSWORD });
  expect(signIn.error).toMatchObject({ status: 400, code: 'invalid_credentials' });
  const refresh = await server.client().auth.refreshSession({ refresh_token: person.refreshToken });
  expect(refresh.error?.status).toBeGreaterThanOrEqual(400);
  const me = await call(server, 'GET', '/auth/v1/user', {
    headers: { authorization: `Bearer ${person.accessToken}` },
  });
  expect(me.status).toBeGreaterThanOrEqual(401);
});

test('the address is free again: a new account can sign up with it', async () => {
  const person = await signUp(server, 'reuse');
  expect((await admin().deleteUser(person.id, true)).error).toBeNull();
  const again = await server.client().auth.signUp({ email: person.email, password: PASSWORD });
  expect(again.error).toBeNull();
  expect(again.data.user!.id).not.toBe(person.id);
  expect(again.data.user!.email).toBe(person.email);
});

test('a second soft deletion changes nothing, and a hard deletion afterwards removes the row', async () => {
  const person = await signUp(server, 'twice');
  expect((await admin().deleteUser(person.id, true)).error).toBeNull();
  const [first] = await row('select email, deleted_at, updated_at from auth.users where id = $1', [
    person.id,
  ]);
  expect((await admin().deleteUser(person.id, true)).error).toBeNull();
  expect(
    await row('select email, deleted_at, updated_at from auth.users where id = $1', [person.id]),
  ).toEqual([first]);
  expect((await admin().deleteUser(person.id)).error).toBeNull();
  expect(await row('select id from auth.users where id = $1', [person.id])).toEqual([]);
});

test('references to the user hold; memberships go, and a solo workspace goes with the account', async () => {
  const [owner, person] = [await signUp(server, 'owner'), await signUp(server, 'member')];
  const shared = await workspace(server, owner, 'Shared with a member', [[person, 'member']]);
  const solo = await workspace(server, person, 'Only mine');
  await server.pool.query(
    `insert into public.projects (workspace_id, name, created_by) values ($1, 'Atlas', $2)`,
    [shared, person.id],
  );

  expect((await admin().deleteUser(person.id, true)).error).toBeNull();
  expect(await row('select created_by from public.projects where workspace_id = $1', [shared])).toEqual([
    { created_by: person.id },
  ]);
  expect(await row('select user_id from public.workspace_members where user_id = $1', [person.id])).toEqual(
    [],
  );
  expect(await row('select id from public.workspaces where id = $1', [solo])).toEqual([]);
  expect(await row('select id from public.workspaces where id = $1', [shared])).toEqual([{ id: shared }]);
});

test('the last owner of a workspace with other members is refused, and nothing changes', async () => {
  const [owner, member] = [await signUp(server, 'last-owner'), await signUp(server, 'stays')];
  await workspace(server, owner, 'Team with one owner', [[member, 'admin']]);
  const { error } = await admin().deleteUser(owner.id, true);
  expect(error).toMatchObject({ status: 409, code: 'conflict' });
  expect(error!.message).toContain('last owner of the workspace "Team with one owner"');
  expect(await row('select email, deleted_at from auth.users where id = $1', [owner.id])).toEqual([
    { email: owner.email, deleted_at: null },
  ]);
  const signIn = await server.client().auth.signInWithPassword({ email: owner.email, password: PASSWORD });
  expect(signIn.error).toBeNull();
});

test('should_soft_delete must be a boolean; an unknown user is 404 either way', async () => {
  const person = await signUp(server, 'typed');
  const response = await call(server, 'DELETE', `/auth/v1/admin/users/${person.id}`, {
    headers: { authorization: `Bearer ${server.config.serviceRoleKey}` },
    body: { should_soft_delete: 'yes' },
  });
  expect(response.status).toBe(400);
  expect(await row('select deleted_at from auth.users where id = $1', [person.id])).toEqual([
    { deleted_at: null },
  ]);
  const missing = '4f7b8a8e-8f0e-4b8a-9a51-1d5c3c0b6f11';
  expect((await admin().deleteUser(missing, true)).error).toMatchObject({
    status: 404,
    code: 'user_not_found',
  });
});
