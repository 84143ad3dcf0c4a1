// Workspace API keys through supabase-js as a program would use them: a key acts in its one
// workspace with its role under row-level security (data API, storage, realtime), only owners and
// admins create, list and revoke keys (never above their own role), revoked, expired, forged and
// unknown keys are refused with 401, each key has its own rate limit, and creation and revocation
// are in the audit log.
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, expect, test } from 'vitest';
import WebSocket from 'ws';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';
import { startStorageServer, type StorageTestServer } from '../storage/support.js';
import { realtimeClient, subscribe } from '../realtime/support.js';

let server: StorageTestServer;
let owner: SignedIn;
let admin: SignedIn;
let member: SignedIn;
let outsider: SignedIn;
let mine: string;
let theirs: string;

interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  role: string;
  name: string;
}

/** A supabase-js client that sends the key as its bearer everywhere (rest, storage, realtime). */
function keyClient(key: string): SupabaseClient {
  return createClient(server.url, server.config.projectApiKey, {
    accessToken: async () => key,
    realtime: { transport: WebSocket as unknown as typeof globalThis.WebSocket },
  });
}

async function createKey(
  by: SignedIn,
  args: { workspace_id?: string; name?: string; role?: string; expires_at?: string | null } = {},
): Promise<CreatedKey> {
  const { data, error } = await by.client.rpc('create_api_key', {
    workspace_id: mine,
    name: 'CI deploys',
    role: 'member',
    ...args,
  });
  if (error) throw new Error(`create_api_key failed: ${error.message}`);
  return data as CreatedKey;
}

beforeAll(async () => {
  server = await startStorageServer({ API_KEY_REQUESTS_PER_MINUTE: '40' });
  owner = await signUp(server, 'keys-owner');
  admin = await signUp(server, 'keys-admin');
  member = await signUp(server, 'keys-member');
  outsider = await signUp(server, 'keys-outsider');
  mine = await workspace(server, owner, 'Keys Co', [
    [admin, 'admin'],
    [member, 'member'],
  ]);
  theirs = await workspace(server, outsider, 'Elsewhere Co');
  await owner.client.from('projects').insert({ workspace_id: mine, name: 'Ours' });
  await outsider.client.from('projects').insert({ workspace_id: theirs, name: 'Theirs' });
});
afterAll(async () => server?.close());

test('a key is shown once, looks like tnt_<id><secret>, and only its hash is stored', async () => {
  const created = await createKey(admin, { name: 'Reporting' });
  expect(created.key).toMatch(/^tnt_[0-9a-f]{16}[A-Za-z0-9_-]{43}$/);
  expect(created.key.startsWith(created.prefix)).toBe(true);
  expect(created.prefix).toHaveLength(20);
  const stored = await server.pool.query<{ row: string }>(
    `select row_to_json(k)::text as row from internal.api_keys k where id = $1`,
    [created.id],
  );
  expect(stored.rows[0]!.row).not.toContain(created.key.slice(20));
  const { data: listed, error } = await admin.client.rpc('list_api_keys', { workspace_id: mine });
  expect(error).toBeNull();
  const row = (listed as Record<string, unknown>[]).find((k) => k.id === created.id)!;
  expect(row).toMatchObject({
    name: 'Reporting',
    role: 'member',
    prefix: created.prefix,
    created_by: admin.id,
  });
  expect(row).not.toHaveProperty('key');
  expect(JSON.stringify(listed)).not.toContain(created.key.slice(20));
});

test('a key reads only its own workspace rows, as a member of that one workspace', async () => {
  const { key } = await createKey(owner, { role: 'viewer' });
  const client = keyClient(key);
  const projects = await client.from('projects').select('name, workspace_id');
  expect(projects.error).toBeNull();
  expect(projects.data).toEqual([{ name: 'Ours', workspace_id: mine }]);
  const workspaces = await client.from('workspaces').select('id');
  expect(workspaces.data).toEqual([{ id: mine }]);
  // Asking for the other workspace by id finds nothing, as for any non-member.
  expect((await client.from('projects').select('name').eq('workspace_id', theirs)).data).toEqual([]);
  // Its creator's own rows (preferences) are not the key's, nor are people outside the workspace.
  const preferences = await client.from('notification_preferences').select('user_id');
  expect(preferences.error).toBeNull();
  expect(preferences.data?.map((p) => p.user_id)).not.toContain(owner.id);
  expect((await client.from('profiles').select('id').eq('id', outsider.id)).data).toEqual([]);
  expect((await owner.client.from('notification_preferences').select('user_id')).data).toEqual([
    { user_id: owner.id },
  ]);
});

test('a key cannot exceed its role: a member key writes projects but cannot do admin things', async () => {
  const { key } = await createKey(owner, { role: 'member' });
  const client = keyClient(key);
  const insert = await client.from('projects').insert({ workspace_id: mine, name: 'From CI' }).select('name');
  expect(insert.error).toBeNull();
  expect(insert.data).toEqual([{ name: 'From CI' }]);
  const rename = await client.from('workspaces').update({ name: 'Hijacked' }).eq('id', mine).select('id');
  expect(rename.data).toEqual([]);
  const promote = await client
    .from('workspace_members')
    .update({ role: 'owner' })
    .eq('user_id', member.id)
    .select();
  expect(promote.data).toEqual([]);
  const named = await server.pool.query<{ name: string }>(
    'select name from public.workspaces where id = $1',
    [mine],
  );
  expect(named.rows[0]!.name).toBe('Keys Co');
  // A key cannot mint keys, create workspaces or otherwise act as a person.
  const mint = await client.rpc('create_api_key', { workspace_id: mine, name: 'x', role: 'viewer' });
  expect(mint.error?.message).toBe('An API key cannot do this: sign in as a person');
  const made = await client.rpc('create_workspace', { name: 'Key Land' });
  expect(made.error).not.toBeNull();
});

test('an admin key does admin things in its workspace, and nothing in another', async () => {
  const { key } = await createKey(owner, { role: 'admin', name: 'Ops' });
  const client = keyClient(key);
  const rename = await client
    .from('workspaces')
    .update({ name: 'Keys Co Renamed' })
    .eq('id', mine)
    .select('name');
  expect(rename.data).toEqual([{ name: 'Keys Co Renamed' }]);
  const elsewhere = await client.from('workspaces').update({ name: 'Nope' }).eq('id', theirs).select('name');
  expect(elsewhere.data).toEqual([]);
  await owner.client.from('workspaces').update({ name: 'Keys Co' }).eq('id', mine);
});

test('only owners and admins create keys, never above their own role', async () => {
  const byMember = await member.client.rpc('create_api_key', {
    workspace_id: mine,
    name: 'x',
    role: 'viewer',
  });
  expect(byMember.error?.message).toBe('Only owners and admins manage API keys');
  expect(byMember.status).toBe(403);
  const byOutsider = await outsider.client.rpc('create_api_key', {
    workspace_id: mine,
    name: 'x',
    role: 'viewer',
  });
  expect(byOutsider.status).toBe(404);
  const above = await admin.client.rpc('create_api_key', { workspace_id: mine, name: 'x', role: 'owner' });
  expect(above.status).toBe(403);
  expect(above.error?.message).toBe("A key's role cannot be above your own (admin)");
  const past = await admin.client.rpc('create_api_key', {
    workspace_id: mine,
    name: 'x',
    role: 'viewer',
    expires_at: new Date(Date.now() - 1000).toISOString(),
  });
  expect(past.status).toBe(400);
  const unnamed = await admin.client.rpc('create_api_key', {
    workspace_id: mine,
    name: '  ',
    role: 'viewer',
  });
  expect(unnamed.status).toBe(400);
  const listByMember = await member.client.rpc('list_api_keys', { workspace_id: mine });
  expect(listByMember.status).toBe(404);
  // None of the refused requests made a key.
  const count = await server.pool.query<{ n: number }>(
    `select count(*)::int as n from internal.api_keys where name = 'x' or name = ''`,
  );
  expect(count.rows[0]!.n).toBe(0);
});

test('a revoked key is refused on the very next request, and both changes are audited', async () => {
  const created = await createKey(admin, { role: 'viewer', name: 'Short-lived' });
  const client = keyClient(created.key);
  expect((await client.from('projects').select('name')).error).toBeNull();
  const byMember = await member.client.rpc('revoke_api_key', { key_id: created.id });
  expect(byMember.status).toBe(404);
  const revoked = await admin.client.rpc('revoke_api_key', { key_id: created.id });
  expect(revoked.error).toBeNull();
  expect((revoked.data as { revoked_at: string | null }).revoked_at).not.toBeNull();
  const after = await client.from('projects').select('name');
  expect(after.status).toBe(401);
  expect(after.data).toBeNull();
  const lines = await server.pool.query<{
    action: string;
    actor_id: string;
    details: Record<string, unknown>;
  }>(
    `select action, actor_id, details from public.audit_events
     where target_type = 'api_key' and target_id = $1 order by id`,
    [created.id],
  );
  expect(lines.rows.map((l) => [l.action, l.actor_id])).toEqual([
    ['api_key.created', admin.id],
    ['api_key.revoked', admin.id],
  ]);
  expect(lines.rows[0]!.details).toMatchObject({
    name: 'Short-lived',
    role: 'viewer',
    prefix: created.prefix,
  });
});

test('an expired key is refused', async () => {
  const created = await createKey(owner, { expires_at: new Date(Date.now() + 60_000).toISOString() });
  const client = keyClient(created.key);
  expect((await client.from('projects').select('name')).status).toBe(200);
  await server.pool.query(
    `update internal.api_keys set expires_at = now() - interval '1 second' where id = $1`,
    [created.id],
  );
  const after = await client.from('projects').select('name');
  expect(after.status).toBe(401);
});

test('forged and unknown keys are refused with 401 alike', async () => {
  const { key } = await createKey(owner);
  const last = key.at(-1) === 'A' ? 'B' : 'A';
  const forged = key.slice(0, -1) + last;
  const unknown = `tnt_${'0'.repeat(16)}${key.slice(20)}`;
  for (const bad of [forged, unknown, 'tnt_short', `${key}x`]) {
    const reply = await keyClient(bad).from('projects').select('name');
    expect(reply.status, bad).toBe(401);
    expect(reply.data).toBeNull();
  }
  // Keys are for data, not accounts: the identity API does not take them.
  const user = await fetch(`${server.url}/auth/v1/user`, {
    headers: { apikey: server.config.projectApiKey, authorization: `Bearer ${key}` },
  });
  expect(user.status).toBe(401);
});

test('a key that a creator no longer backs loses what the creator lost', async () => {
  const demoted = await signUp(server, 'keys-demoted');
  await server.pool.query(
    `insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, 'admin')`,
    [mine, demoted.id],
  );
  const { key } = await createKey(demoted, { role: 'admin' });
  const client = keyClient(key);
  expect(
    (await client.from('workspaces').update({ name: 'Keys Co' }).eq('id', mine).select('id')).data,
  ).toEqual([{ id: mine }]);
  await server.pool.query(`update public.workspace_members set role = 'viewer' where user_id = $1`, [
    demoted.id,
  ]);
  expect(
    (await client.from('workspaces').update({ name: 'Keys Co' }).eq('id', mine).select('id')).data,
  ).toEqual([]);
  await server.pool.query(`delete from public.workspace_members where user_id = $1`, [demoted.id]);
  expect((await client.from('projects').select('name')).data).toEqual([]);
});

test('last used is recorded, at most once a minute', async () => {
  const created = await createKey(owner, { role: 'viewer' });
  const client = keyClient(created.key);
  await client.from('projects').select('name');
  const read = async () =>
    (
      await server.pool.query<{ last_used_at: Date | null }>(
        'select last_used_at from internal.api_keys where id = $1',
        [created.id],
      )
    ).rows[0]!.last_used_at;
  let first: Date | null = null;
  for (let i = 0; i < 50 && !first; i++) {
    first = await read();
    if (!first) await new Promise((r) => setTimeout(r, 20));
  }
  expect(first).not.toBeNull();
  await client.from('projects').select('name');
  await new Promise((r) => setTimeout(r, 100));
  expect((await read())?.getTime()).toBe(first!.getTime());
});

test('each key has its own per-minute allowance (API_KEY_REQUESTS_PER_MINUTE)', async () => {
  const busy = keyClient((await createKey(owner, { role: 'viewer', name: 'Busy' })).key);
  const calm = keyClient((await createKey(owner, { role: 'viewer', name: 'Calm' })).key);
  const statuses: number[] = [];
  for (let i = 0; i < 41; i++) statuses.push((await busy.from('projects').select('name')).status);
  expect(statuses.slice(0, 40).every((s) => s === 200)).toBe(true);
  expect(statuses[40]).toBe(429);
  expect((await calm.from('projects').select('name')).status).toBe(200);
});

test('storage accepts a key for its own workspace files only', async () => {
  const { key } = await createKey(owner, { role: 'member' });
  const files = keyClient(key).storage.from('workspace-files');
  await outsider.client.storage.from('workspace-files').upload(`${theirs}/secret.txt`, new Blob(['theirs']));
  const up = await files.upload(`${mine}/from-key.txt`, new Blob(['by key']));
  expect(up.error).toBeNull();
  expect(await (await files.download(`${mine}/from-key.txt`)).data?.text()).toBe('by key');
  expect((await files.download(`${theirs}/secret.txt`)).error).toBeTruthy();
  expect((await files.upload(`${theirs}/planted.txt`, new Blob(['x']))).error).toBeTruthy();
  const revoked = await createKey(owner, { role: 'member' });
  await owner.client.rpc('revoke_api_key', { key_id: revoked.id });
  const refused = await keyClient(revoked.key)
    .storage.from('workspace-files')
    .download(`${mine}/from-key.txt`);
  expect(refused.error).toBeTruthy();
});

test('realtime accepts a key on its own workspace private channel only', async () => {
  // Core policies (migration 0084) let a workspace's members use its private channel.
  const { key } = await createKey(owner, { role: 'viewer' });
  const asPerson = realtimeClient(server);
  await asPerson.realtime.setAuth(owner.accessToken);
  const person = await subscribe(asPerson.channel(`workspace:${mine}`, { config: { private: true } }));
  expect(person.error?.message).toBeUndefined();
  await asPerson.removeAllChannels();
  // As supabase-js hands any bearer to realtime: setAuth with the key.
  const client = realtimeClient(server);
  await client.realtime.setAuth(key);
  const ours = await subscribe(client.channel(`workspace:${mine}`, { config: { private: true } }));
  expect(ours.error?.message).toBeUndefined();
  expect(ours.status).toBe('SUBSCRIBED');
  const other = await subscribe(client.channel(`workspace:${theirs}`, { config: { private: true } }));
  expect(other.status).toBe('CHANNEL_ERROR');
  const gone = await createKey(owner, { role: 'viewer' });
  await owner.client.rpc('revoke_api_key', { key_id: gone.id });
  const revoked = realtimeClient(server);
  await revoked.realtime.setAuth(gone.key);
  expect((await subscribe(revoked.channel(`workspace:${mine}`, { config: { private: true } }))).status).toBe(
    'CHANNEL_ERROR',
  );
  await revoked.removeAllChannels();
  await client.removeAllChannels();
});

test("the admin API looks after people only: a key's principal is not listed, read, changed or deleted there", async () => {
  const created = await createKey(admin, { name: 'Hidden from admins' });
  const service = server.adminClient();
  const listed = await service.auth.admin.listUsers({ page: 1, perPage: 1000 });
  expect(listed.error).toBeNull();
  const ids = listed.data.users.map((u) => u.id);
  expect(ids).toContain(owner.id);
  expect(ids).not.toContain(created.id);

  const read = await service.auth.admin.getUserById(created.id);
  expect(read.error?.status).toBe(404);
  // An address and a password would let the key's principal sign in.
  const changed = await service.auth.admin.updateUserById(created.id, {
    email: 'key-principal@example.com',
    password: 'correct horse battery',
  });
  expect(changed.error?.status).toBe(404);
  const deleted = await service.auth.admin.deleteUser(created.id);
  expect(deleted.error?.status).toBe(404);
  const principal = await server.pool.query(
    'select email, encrypted_password from auth.users where id = $1',
    [created.id],
  );
  expect(principal.rows).toEqual([{ email: null, encrypted_password: null }]);

  // The key itself still works: nothing above touched it.
  const { data, error } = await keyClient(created.key).from('projects').select('workspace_id, name');
  expect(error).toBeNull();
  expect(data).toContainEqual({ workspace_id: mine, name: 'Ours' });
  expect(new Set(data!.map((p) => p.workspace_id))).toEqual(new Set([mine]));
});
