// Writes through supabase-js: insert (single, bulk, minimal, representation, defaults), upsert,
// update and delete with filters, and what row-level security does to each.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';

let server: TestServer;
let owner: SignedIn;
let viewer: SignedIn;
let outsider: SignedIn;
let ws: string;
let theirs: string;

beforeAll(async () => {
  server = await startTestServer();
  owner = await signUp(server, 'owner');
  viewer = await signUp(server, 'viewer');
  outsider = await signUp(server, 'outsider');
  ws = await workspace(server, owner, 'Writers', [[viewer, 'viewer']]);
  theirs = await workspace(server, outsider, 'Theirs');
});
afterAll(async () => server?.close());

const count = async (name: string) =>
  Number(
    (await server.pool.query('select count(*) from public.projects where name = $1', [name])).rows[0].count,
  );

describe('insert', () => {
  test('minimal by default: 201 and no body', async () => {
    const res = await owner.client.from('projects').insert({ workspace_id: ws, name: 'Minimal' });
    expect(res.status).toBe(201);
    expect(res.data).toBeNull();
    expect(res.error).toBeNull();
    expect(await count('Minimal')).toBe(1);
  });

  test('bulk with representation and defaults for missing columns', async () => {
    const res = await owner.client
      .from('projects')
      .insert([
        { workspace_id: ws, name: 'Bulk 1', description: 'first' },
        { workspace_id: ws, name: 'Bulk 2' },
      ])
      .select('name, description, created_by, id');
    expect(res.status).toBe(201);
    expect(res.data).toEqual([
      { name: 'Bulk 1', description: 'first', created_by: owner.id, id: expect.any(String) },
      { name: 'Bulk 2', description: null, created_by: owner.id, id: expect.any(String) },
    ]);
  });

  test('RLS: a viewer, or anyone into a workspace they are not in, is refused with 403', async () => {
    const asViewer = await viewer.client.from('projects').insert({ workspace_id: ws, name: 'Viewer try' });
    expect(asViewer.status).toBe(403);
    expect(asViewer.error?.code).toBe('42501');
    const intoOther = await owner.client.from('projects').insert({ workspace_id: theirs, name: 'Trespass' });
    expect(intoOther.status).toBe(403);
    expect(await count('Viewer try')).toBe(0);
    expect(await count('Trespass')).toBe(0);
  });

  test('a column the client may not set is 403; an unknown column is 400 PGRST204', async () => {
    const forged = await owner.client
      .from('projects')
      .insert({ workspace_id: ws, name: 'Forged', created_by: viewer.id });
    expect(forged.status).toBe(403);
    const unknown = await owner.client.from('projects').insert({ workspace_id: ws, nope: 1 });
    expect(unknown.status).toBe(400);
    expect(unknown.error?.code).toBe('PGRST204');
  });

  test('constraint violations map to 400, bad types to 400', async () => {
    const tooLong = await owner.client.from('projects').insert({ workspace_id: ws, name: 'x'.repeat(300) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.error?.code).toBe('23514');
    const badUuid = await owner.client.from('projects').insert({ workspace_id: 'not-a-uuid', name: 'Bad' });
    expect(badUuid.status).toBe(400);
    expect(badUuid.error?.code).toBe('22P02');
  });
});

describe('upsert', () => {
  test('merge-duplicates updates on the key; ignore-duplicates keeps the row', async () => {
    const first = await owner.client
      .from('projects')
      .insert({ workspace_id: ws, name: 'Upsert me' })
      .select('id')
      .single();
    const id = first.data!.id as string;
    const merged = await owner.client
      .from('projects')
      .upsert({ id, workspace_id: ws, name: 'Upserted' })
      .select('name')
      .single();
    expect(merged.data).toEqual({ name: 'Upserted' });
    const ignored = await owner.client
      .from('projects')
      .upsert({ id, workspace_id: ws, name: 'Ignored' }, { ignoreDuplicates: true })
      .select('name');
    expect(ignored.data).toEqual([]);
    expect(await count('Upserted')).toBe(1);
    expect(await count('Ignored')).toBe(0);
  });

  test('on_conflict on a unique column other than the key', async () => {
    const res = await owner.client
      .from('notification_preferences')
      .upsert({ user_id: owner.id, digest_frequency: 'daily' }, { onConflict: 'user_id' })
      .select('digest_frequency');
    // user_id is not an insertable column for clients: the insert half is refused
    expect(res.status).toBe(403);
  });
});

describe('update and delete', () => {
  test('update with a filter returns the changed rows under representation', async () => {
    await owner.client.from('projects').insert({ workspace_id: ws, name: 'To rename' });
    const res = await owner.client
      .from('projects')
      .update({ description: 'renamed' })
      .eq('name', 'To rename')
      .select('name, description');
    expect(res.status).toBe(200);
    expect(res.data).toEqual([{ name: 'To rename', description: 'renamed' }]);
    const minimal = await owner.client
      .from('projects')
      .update({ description: 'again' })
      .eq('name', 'To rename');
    expect(minimal.status).toBe(204);
  });

  test('RLS: updates and deletes of rows the caller cannot write change nothing', async () => {
    await outsider.client.from('projects').insert({ workspace_id: theirs, name: 'Not yours' });
    const upd = await owner.client
      .from('projects')
      .update({ name: 'Stolen' })
      .eq('name', 'Not yours')
      .select();
    expect(upd.data).toEqual([]);
    const del = await viewer.client.from('projects').delete().eq('workspace_id', ws).select();
    expect(del.data).toEqual([]);
    expect(await count('Not yours')).toBe(1);
  });

  test('a filterless update or delete is refused', async () => {
    const upd = await owner.client.from('projects').update({ description: 'all' }).select();
    expect(upd.status).toBe(400);
    expect(upd.error?.message).toContain('requires a WHERE clause');
    const raw = await fetch(`${server.url}/rest/v1/projects`, {
      method: 'DELETE',
      headers: { apikey: server.config.projectApiKey, authorization: `Bearer ${owner.accessToken}` },
    });
    expect(raw.status).toBe(400);
    expect(await count('Minimal')).toBe(1);
  });

  test('delete with a filter', async () => {
    await owner.client.from('projects').insert({ workspace_id: ws, name: 'Doomed' });
    const res = await owner.client.from('projects').delete().eq('name', 'Doomed').select('name');
    expect(res.data).toEqual([{ name: 'Doomed' }]);
    expect(await count('Doomed')).toBe(0);
  });

  test('changing a member role directly follows the same rules as the function', async () => {
    const res = await viewer.client
      .from('workspace_members')
      .update({ role: 'owner' })
      .eq('workspace_id', ws)
      .eq('user_id', viewer.id)
      .select();
    // the viewer is not an admin: the row is out of reach of the update policy
    expect(res.data).toEqual([]);
    const ownerTry = await owner.client
      .from('workspace_members')
      .update({ role: 'viewer' })
      .eq('workspace_id', ws)
      .eq('user_id', owner.id);
    expect(ownerTry.status).toBe(400);
    expect(ownerTry.error?.message).toContain('at least one owner');
  });
});
