// Operations at /rest/v1/rpc through supabase-js: the workspace and invitation lifecycle, the
// status each database error maps to, GET calls and read-only enforcement.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createTestDatabase, startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';

let server: TestServer;
let owner: SignedIn;
let invitee: SignedIn;
let stranger: SignedIn;

beforeAll(async () => {
  const url = await createTestDatabase();
  // A stable function of our own, to exercise GET /rpc with filters on a set-returning result.
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`
    create function public.workspace_names(prefix text default '') returns setof public.workspaces
    language sql stable as $$ select * from public.workspaces where name like prefix || '%' $$;
    grant execute on function public.workspace_names(text) to authenticated;
    create function public.add_numbers(a integer, b integer) returns integer
    language sql immutable as $$ select a + b $$;
    grant execute on function public.add_numbers(integer, integer) to anon, authenticated;`);
  await client.end();
  server = await startTestServer({ DATABASE_URL: url });
  owner = await signUp(server, 'owner');
  invitee = await signUp(server, 'invitee');
  stranger = await signUp(server, 'stranger');
});
afterAll(async () => server?.close());

describe('the workspace lifecycle over RPC', () => {
  test('create, invite, accept, change role, remove', async () => {
    const created = await owner.client.rpc('create_workspace', { name: 'Lifecycle Ltd', slug: 'lifecycle' });
    expect(created.error).toBeNull();
    expect(created.data).toMatchObject({ name: 'Lifecycle Ltd', slug: 'lifecycle', created_by: owner.id });
    const ws = (created.data as { id: string }).id;

    const invitation = await owner.client.rpc('invite_member', {
      workspace_id: ws,
      email: invitee.email,
      role: 'admin',
    });
    expect(invitation.error).toBeNull();
    const { token, invitation_id } = invitation.data as { token: string; invitation_id: string };

    const pending = await owner.client
      .from('invitations')
      .select('email, role')
      .eq('id', invitation_id)
      .single();
    expect(pending.data).toEqual({ email: invitee.email, role: 'admin' });

    const wrongUser = await stranger.client.rpc('accept_invitation', { token });
    expect(wrongUser.status).toBe(403);

    const accepted = await invitee.client.rpc('accept_invitation', { token });
    expect(accepted.data).toEqual({ workspace_id: ws, role: 'admin' });
    const again = await invitee.client.rpc('accept_invitation', { token });
    expect(again.status).toBe(409);
    expect(again.error?.code).toBe('PT409');

    const demote = await owner.client.rpc('update_member_role', {
      workspace_id: ws,
      user_id: invitee.id,
      role: 'viewer',
    });
    expect(demote.status).toBe(204);
    const removed = await owner.client.rpc('remove_member', { workspace_id: ws, user_id: invitee.id });
    expect(removed.status).toBe(204);
    const visible = await invitee.client.from('workspaces').select('id').eq('id', ws);
    expect(visible.data).toEqual([]);
  });
});

describe('error statuses', () => {
  test('403 permission, 404 hidden workspace, 400 rule, 409 conflict, 401 anonymous, 410 expired', async () => {
    const ws = await workspace(server, owner, 'Errors Inc', [[invitee, 'member']]);
    const forbidden = await invitee.client.rpc('invite_member', {
      workspace_id: ws,
      email: 'x@example.com',
      role: 'viewer',
    });
    expect(forbidden.status).toBe(403);
    expect(forbidden.error?.code).toBe('42501');

    const hidden = await stranger.client.rpc('delete_workspace', { workspace_id: ws });
    expect(hidden.status).toBe(404);

    const lastOwner = await owner.client.rpc('leave_workspace', { workspace_id: ws });
    expect(lastOwner.status).toBe(400);
    expect(lastOwner.error?.message).toContain('at least one owner');

    await owner.client.rpc('create_workspace', { name: 'Dup', slug: 'dup-slug' });
    const duplicate = await owner.client.rpc('create_workspace', { name: 'Dup', slug: 'dup-slug' });
    expect(duplicate.status).toBe(409);

    const anonymous = await server.client().rpc('create_workspace', { name: 'Anon' });
    expect(anonymous.status).toBe(401);

    const invitation = await owner.client.rpc('invite_member', { workspace_id: ws, email: stranger.email });
    await server.pool.query(
      `update public.invitations set expires_at = now() - interval '1 hour' where email = $1`,
      [stranger.email],
    );
    const expired = await stranger.client.rpc('accept_invitation', {
      token: (invitation.data as { token: string }).token,
    });
    expect(expired.status).toBe(410);
    expect(expired.error?.message).toContain('expired');
  });

  test('unknown function 404 PGRST202; wrong arguments 404 with a hint', async () => {
    const unknown = await owner.client.rpc('no_such_function');
    expect(unknown.status).toBe(404);
    expect(unknown.error?.code).toBe('PGRST202');
    const wrongArgs = await owner.client.rpc('create_workspace', { title: 'x' });
    expect(wrongArgs.status).toBe(404);
    expect(wrongArgs.error?.hint).toContain('name');
  });
});

describe('GET calls', () => {
  test('a stable set-returning function accepts filters, select and order', async () => {
    await workspace(server, owner, 'Alpha One');
    await workspace(server, owner, 'Alpha Two');
    const res = await owner.client
      .rpc('workspace_names', { prefix: 'Alpha' }, { get: true })
      .select('name')
      .neq('name', 'Alpha Two')
      .order('name');
    expect(res.error).toBeNull();
    expect(res.data).toEqual([{ name: 'Alpha One' }]);
  });

  test('scalars come back bare', async () => {
    const post = await server.client().rpc('add_numbers', { a: 2, b: 40 });
    expect(post.data).toBe(42);
    const get = await server.client().rpc('add_numbers', { a: 1, b: 1 }, { get: true });
    expect(get.data).toBe(2);
  });

  test('a function that writes cannot run over GET (read-only transaction): 405', async () => {
    const res = await owner.client.rpc('create_workspace', { name: 'Via GET' }, { get: true });
    expect(res.status).toBe(405);
    const none = await server.pool.query(`select 1 from public.workspaces where name = 'Via GET'`);
    expect(none.rowCount).toBe(0);
  });
});
