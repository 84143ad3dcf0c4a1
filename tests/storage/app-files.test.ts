// The web app's buckets (migration 0077): avatars written only into one's own folder and read by
// coworkers, not strangers; workspace logos written by admins and owners only; project files
// read by viewers, written by members, only into a project of that workspace, and deleted with
// the project; a profile or workspace names only an uploaded picture, and replacing one deletes
// the old file.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { SupabaseClient } from '@supabase/supabase-js';
import { withService } from '../../src/server/db/transactions.js';
import { syncAppBuckets } from '../../src/server/storage/app-buckets.js';
import { signUp, workspace, type SignedIn } from '../support/workspaces.js';
import { startStorageServer, type StorageTestServer } from './support.js';

let server: StorageTestServer;
let owner: SignedIn;
let member: SignedIn;
let viewer: SignedIn;
let stranger: SignedIn;
let ws: string;
let project: string;

const storage = (user: SignedIn, bucket: string) => (user.client as SupabaseClient).storage.from(bucket);
const png = () => new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3])], { type: 'image/png' });

async function names(bucket: string, prefix: string): Promise<string[]> {
  return withService(server.pool, async (tx) => {
    const r = await tx.query<{ name: string }>(
      'select name from storage.objects where bucket_id = $1 and name like $2 order by name',
      [bucket, `${prefix}%`],
    );
    return r.rows.map((row) => row.name);
  });
}

beforeAll(async () => {
  server = await startStorageServer();
  owner = await signUp(server, 'app-files-owner');
  member = await signUp(server, 'app-files-member');
  viewer = await signUp(server, 'app-files-viewer');
  stranger = await signUp(server, 'app-files-stranger');
  ws = await workspace(server, owner, 'App Files Co', [
    [member, 'member'],
    [viewer, 'viewer'],
  ]);
  const { data, error } = await (owner.client as SupabaseClient)
    .from('projects')
    .insert({ workspace_id: ws, name: 'Launch' })
    .select('id')
    .single();
  if (error) throw new Error(error.message);
  project = (data as { id: string }).id;
});
afterAll(async () => server?.close());

test('avatars: only into one own folder, seen by coworkers and not by strangers', async () => {
  const mine = `${member.id}/a.png`;
  expect(
    (await storage(member, 'profile-avatars').upload(mine, png(), { contentType: 'image/png' })).error,
  ).toBeNull();
  const planted = await storage(member, 'profile-avatars').upload(`${owner.id}/a.png`, png(), {
    contentType: 'image/png',
  });
  expect(planted.error).toMatchObject({ statusCode: '403' });
  // A picture is not a program: the bucket takes images only.
  const script = await storage(member, 'profile-avatars').upload(`${member.id}/b.html`, new Blob(['<b>']), {
    contentType: 'text/html',
  });
  expect(script.error).toMatchObject({ statusCode: '415' });
  expect((await storage(viewer, 'profile-avatars').download(mine)).data?.size).toBe(7);
  expect((await storage(stranger, 'profile-avatars').download(mine)).error).toBeTruthy();
  expect((await storage(stranger, 'profile-avatars').remove([mine])).data).toEqual([]);
  expect(await names('profile-avatars', `${member.id}/`)).toEqual([mine]);
});

test('a profile names only an uploaded picture of its own; a new one deletes the old', async () => {
  const me = member.client as SupabaseClient;
  const missing = await me
    .from('profiles')
    .update({ avatar_path: `${member.id}/none.png` })
    .eq('id', member.id);
  expect(missing.error?.message).toBe('The picture was not uploaded; upload it again');
  const foreign = await me
    .from('profiles')
    .update({ avatar_path: `${owner.id}/a.png` })
    .eq('id', member.id);
  expect(foreign.error).toBeTruthy();
  expect(
    (
      await me
        .from('profiles')
        .update({ avatar_path: `${member.id}/a.png` })
        .eq('id', member.id)
    ).error,
  ).toBeNull();
  await storage(member, 'profile-avatars').upload(`${member.id}/c.png`, png(), { contentType: 'image/png' });
  expect(
    (
      await me
        .from('profiles')
        .update({ avatar_path: `${member.id}/c.png` })
        .eq('id', member.id)
    ).error,
  ).toBeNull();
  expect(await names('profile-avatars', `${member.id}/`)).toEqual([`${member.id}/c.png`]);
  expect((await me.from('profiles').update({ avatar_path: null }).eq('id', member.id)).error).toBeNull();
  expect(await names('profile-avatars', `${member.id}/`)).toEqual([]);
});

test('a deleted account takes its picture with it', async () => {
  const leaving = await signUp(server, 'app-files-leaving');
  await storage(leaving, 'profile-avatars').upload(`${leaving.id}/me.png`, png(), {
    contentType: 'image/png',
  });
  await (leaving.client as SupabaseClient)
    .from('profiles')
    .update({ avatar_path: `${leaving.id}/me.png` })
    .eq('id', leaving.id);
  await withService(server.pool, (tx) => tx.query('select auth.soft_delete_user($1)', [leaving.id]));
  expect(await names('profile-avatars', `${leaving.id}/`)).toEqual([]);
});

test('workspace logos: admins and owners write, members read', async () => {
  const logo = `${ws}/logo.png`;
  const byMember = await storage(member, 'workspace-logos').upload(logo, png(), { contentType: 'image/png' });
  expect(byMember.error).toMatchObject({ statusCode: '403' });
  expect(
    (await storage(owner, 'workspace-logos').upload(logo, png(), { contentType: 'image/png' })).error,
  ).toBeNull();
  expect((await storage(viewer, 'workspace-logos').download(logo)).data?.size).toBe(7);
  expect((await storage(stranger, 'workspace-logos').download(logo)).error).toBeTruthy();
  const byViewer = await (viewer.client as SupabaseClient)
    .from('workspaces')
    .update({ logo_path: logo })
    .eq('id', ws)
    .select();
  expect(byViewer.data).toEqual([]);
  const set = await (owner.client as SupabaseClient)
    .from('workspaces')
    .update({ logo_path: logo })
    .eq('id', ws);
  expect(set.error).toBeNull();
  expect((await storage(member, 'workspace-logos').remove([logo])).data).toEqual([]);
});

test('project files: viewers read, members write into existing projects only, gone with the project', async () => {
  const file = `${ws}/${project}/f1/notes.txt`;
  const text = new Blob(['the notes'], { type: 'text/plain' });
  expect(
    (await storage(viewer, 'project-files').upload(`${ws}/${project}/f0/x.txt`, text)).error,
  ).toMatchObject({
    statusCode: '403',
  });
  expect((await storage(member, 'project-files').upload(file, text)).error).toBeNull();
  expect(await (await storage(viewer, 'project-files').download(file)).data?.text()).toBe('the notes');
  expect((await storage(viewer, 'project-files').remove([file])).data).toEqual([]);
  expect((await storage(stranger, 'project-files').download(file)).error).toBeTruthy();
  const nowhere = `${ws}/${crypto.randomUUID()}/f1/x.txt`;
  expect((await storage(member, 'project-files').upload(nowhere, text)).error).toMatchObject({
    statusCode: '403',
  });
  // The files count against the workspace's plan like its other files.
  const used = await withService(server.pool, (tx) =>
    tx.query<{ b: string }>('select tenantry.storage_bytes_used($1)::text as b', [ws]),
  );
  expect(Number(used.rows[0]!.b)).toBeGreaterThanOrEqual(9);

  const deleted = await (member.client as SupabaseClient).from('projects').delete().eq('id', project);
  expect(deleted.error).toBeNull();
  expect(await names('project-files', `${ws}/${project}/`)).toEqual([]);
  const queued = await withService(server.pool, (tx) =>
    tx.query<{ n: number }>('select count(*)::int as n from internal.storage_deletions'),
  );
  expect(queued.rows[0]!.n + (await server.drainDeletions())).toBeGreaterThan(0);
});

test('the buckets take their limits from configuration at start-up', async () => {
  await syncAppBuckets(server.pool, {
    pictureMaxBytes: 1000,
    projectFileMaxBytes: 4,
    projectFileTypes: ['text/plain'],
  });
  const { data } = await (owner.client as SupabaseClient)
    .from('projects')
    .insert({ workspace_id: ws, name: 'Small' })
    .select('id')
    .single();
  const place = `${ws}/${(data as { id: string }).id}/f`;
  const text = (body: string) => new Blob([body], { type: 'text/plain' });
  expect((await storage(member, 'project-files').upload(`${place}/a.txt`, text('1234'))).error).toBeNull();
  expect(
    (await storage(member, 'project-files').upload(`${place}/b.txt`, text('12345'))).error,
  ).toMatchObject({
    statusCode: '413',
  });
  const typed = await storage(member, 'project-files').upload(
    `${place}/c.csv`,
    new Blob(['1'], { type: 'text/csv' }),
  );
  expect(typed.error).toMatchObject({ statusCode: '415' });
  const buckets = await withService(server.pool, (tx) =>
    tx.query<{ id: string; file_size_limit: string; allowed_mime_types: string[] | null }>(
      `select id, file_size_limit::text, allowed_mime_types from storage.buckets
       where id in ('profile-avatars', 'workspace-logos', 'project-files') order by id`,
    ),
  );
  expect(buckets.rows).toEqual([
    {
      id: 'profile-avatars',
      file_size_limit: '1000',
      allowed_mime_types: ['image/png', 'image/jpeg', 'image/webp'],
    },
    { id: 'project-files', file_size_limit: '4', allowed_mime_types: ['text/plain'] },
    {
      id: 'workspace-logos',
      file_size_limit: '1000',
      allowed_mime_types: ['image/png', 'image/jpeg', 'image/webp'],
    },
  ]);
  await syncAppBuckets(server.pool, {
    pictureMaxBytes: 1000,
    projectFileMaxBytes: 4,
    projectFileTypes: null,
  });
  const any = await withService(server.pool, (tx) =>
    tx.query<{ t: string[] | null }>(
      `select allowed_mime_types as t from storage.buckets where id = 'project-files'`,
    ),
  );
  expect(any.rows[0]!.t).toBeNull();
});
