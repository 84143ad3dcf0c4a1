// Workspaces that require MFA, enforced by row-level security through auth.jwt()->>'aal' and
// exercised through the real supabase-js client: only an owner or admin at aal2 can turn the
// requirement on; from then on a member at aal1 sees nothing of the workspace through the data
// API and its operations refuse them, until they pass a second factor.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { Secret, TOTP } from 'otpauth';
import type { SupabaseClient } from '@supabase/supabase-js';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const codeFor = (secret: string, at = Date.now()) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp: at,
  });

/** Enrols and verifies a TOTP factor: the client's session is now at aal2. */
async function passSecondFactor(client: SupabaseClient): Promise<string> {
  const { data, error } = await client.auth.mfa.enroll({ factorType: 'totp' });
  expect(error).toBeNull();
  const verified = await client.auth.mfa.challengeAndVerify({
    factorId: data!.id,
    code: codeFor(data!.totp.secret),
  });
  expect(verified.error).toBeNull();
  return data!.totp.secret;
}

async function visible(client: SupabaseClient, workspaceId: string) {
  const count = async (table: string, column = 'workspace_id') => {
    const { data, error } = await client.from(table).select('*').eq(column, workspaceId);
    expect(error).toBeNull();
    return data!.length;
  };
  return {
    workspaces: await count('workspaces', 'id'),
    members: await count('workspace_members'),
    projects: await count('projects'),
    activity: await count('activity_events'),
    subscriptions: await count('subscriptions'),
  };
}

let owner: SignedIn;
let member: SignedIn;
let workspaceId: string;

beforeAll(async () => {
  owner = await signUp(server, 'owner');
  member = await signUp(server, 'member');
  workspaceId = await workspace(server, owner, 'Locked Co', [[member, 'member']]);
  const project = await owner.client.from('projects').insert({ workspace_id: workspaceId, name: 'Apollo' });
  expect(project.error).toBeNull();
});

test('turning the requirement on needs a session at aal2', async () => {
  const refused = await owner.client.from('workspaces').update({ require_mfa: true }).eq('id', workspaceId);
  expect(refused.error?.code).toBe('42501');
  expect(refused.error?.message).toContain('two-step verification');
  const memberTry = await member.client
    .from('workspaces')
    .update({ require_mfa: true })
    .eq('id', workspaceId)
    .select();
  expect(memberTry.data ?? []).toEqual([]); // a member cannot edit the workspace at all

  await passSecondFactor(owner.client);
  const done = await owner.client
    .from('workspaces')
    .update({ require_mfa: true })
    .eq('id', workspaceId)
    .select('require_mfa');
  expect(done.error).toBeNull();
  expect(done.data).toEqual([{ require_mfa: true }]);
});

test('a member at aal1 sees nothing of the workspace and its operations refuse them; at aal2 they see it all', async () => {
  expect(await visible(member.client, workspaceId)).toEqual({
    workspaces: 0,
    members: 0,
    projects: 0,
    activity: 0,
    subscriptions: 0,
  });
  const insert = await member.client.from('projects').insert({ workspace_id: workspaceId, name: 'Sneaky' });
  expect(insert.error).not.toBeNull();
  // Nor can they change or remove its projects: no row is theirs to touch.
  const renamed = await member.client
    .from('projects')
    .update({ name: 'Renamed' })
    .eq('workspace_id', workspaceId)
    .select('id');
  expect(renamed.data ?? []).toEqual([]);
  const removed = await member.client.from('projects').delete().eq('workspace_id', workspaceId).select('id');
  expect(removed.data ?? []).toEqual([]);
  const leave = await member.client.rpc('leave_workspace', { workspace_id: workspaceId });
  expect(leave.error?.code).toBe('42501');
  expect(leave.error?.message).toContain('two-step verification');

  // The owner, at aal2, still sees everything.
  const ownerView = await visible(owner.client, workspaceId);
  expect(ownerView).toMatchObject({ workspaces: 1, members: 2, projects: 1 });
  const apollo = await owner.client.from('projects').select('name').eq('workspace_id', workspaceId);
  expect(apollo.data).toEqual([{ name: 'Apollo' }]);

  await passSecondFactor(member.client);
  expect(await visible(member.client, workspaceId)).toMatchObject({ workspaces: 1, members: 2, projects: 1 });
});

test('the same owner signed in again with only a password (aal1) is locked out too', async () => {
  const again = server.client();
  const signIn = await again.auth.signInWithPassword({
    email: owner.email,
    password: 'correct horse battery',
  });
  expect(signIn.error).toBeNull();
  expect(await visible(again, workspaceId)).toMatchObject({ workspaces: 0, members: 0, projects: 0 });
  const invite = await again.rpc('invite_member', {
    workspace_id: workspaceId,
    email: 'someone@example.com',
    role: 'member',
  });
  expect(invite.error?.code).toBe('42501');
});

test('at aal1 only the workspaces that require MFA close: the same person keeps reading and writing the others', async () => {
  const open = await workspace(server, owner, 'Side Co');
  const seeded = await owner.client.from('projects').insert({ workspace_id: open, name: 'Gemini' });
  expect(seeded.error).toBeNull();

  const again = server.client();
  const signIn = await again.auth.signInWithPassword({
    email: owner.email,
    password: 'correct horse battery',
  });
  expect(signIn.error).toBeNull();
  const listed = await again.from('projects').select('name, workspace_id').order('name');
  expect(listed.error).toBeNull();
  expect(listed.data).toEqual([{ name: 'Gemini', workspace_id: open }]);

  const written = await again.from('projects').insert({ workspace_id: open, name: 'Mercury' }).select('name');
  expect(written.error).toBeNull();
  expect(written.data).toEqual([{ name: 'Mercury' }]);
  const refused = await again.from('projects').insert({ workspace_id: workspaceId, name: 'Vostok' });
  expect(refused.error?.code).toBe('42501');
});
test('workspaces without the requirement stay visible at aal1', async () => {
  const plain = await signUp(server, 'plain');
  const other = await workspace(server, plain, 'Open Co');
  expect(await visible(plain.client, other)).toMatchObject({ workspaces: 1, members: 1 });
});

test('a member at aal1 does not see the profiles of a workspace that requires MFA; with its second factor they do', async () => {
  const newcomer = await signUp(server, 'newcomer');
  await server.pool.query(
    `insert into public.workspace_members (workspace_id, user_id, role) values ($1, $2, 'member')`,
    [workspaceId, newcomer.id],
  );
  await server.pool.query(`update public.profiles set display_name = 'Owner Person' where id = $1`, [
    owner.id,
  ]);
  const hidden = await newcomer.client.from('profiles').select('id, display_name').eq('id', owner.id);
  expect(hidden.error).toBeNull();
  expect(hidden.data).toEqual([]);
  // Their own profile stays theirs to read.
  const own = await newcomer.client.from('profiles').select('id').eq('id', newcomer.id);
  expect(own.data).toEqual([{ id: newcomer.id }]);

  await passSecondFactor(newcomer.client);
  const shown = await newcomer.client.from('profiles').select('id, display_name').eq('id', owner.id);
  expect(shown.data).toEqual([{ id: owner.id, display_name: 'Owner Person' }]);
});
