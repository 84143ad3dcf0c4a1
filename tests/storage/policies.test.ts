// Every operation checks exactly the policies Supabase checks, with policies written as for
// Supabase (owner_id, storage.foldername): upload needs insert; upsert insert + select + update;
// download and list select; remove select + delete; move select + update; copy select + insert.
// Each policy is added in turn and the operation it unlocks, and only that one, starts to work.
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { SupabaseClient } from '@supabase/supabase-js';
import { signUp, type SignedIn } from '../support/workspaces.js';
import { startStorageServer, type StorageTestServer } from './support.js';

let server: StorageTestServer;
let user: SignedIn;

beforeAll(async () => {
  server = await startStorageServer();
  await server.adminClient().storage.createBucket('inbox');
  user = await signUp(server, 'policies');
});
afterAll(async () => server?.close());

const inbox = () => (user.client as SupabaseClient).storage.from('inbox');
const own = `bucket_id = 'inbox' and owner_id = (select auth.uid())::text and (storage.foldername(name))[1] = 'mine'`;
const policy = (sql: string) => server.pool.query(sql);

test('each operation needs exactly the policies Supabase names for it', async () => {
  // No policy: nothing.
  expect((await inbox().upload('mine/a.txt', new Blob(['a']))).error).toMatchObject({ statusCode: '403' });

  await policy(
    `create policy inbox_insert on storage.objects for insert to authenticated with check (${own})`,
  );
  expect((await inbox().upload('mine/a.txt', new Blob(['a']))).error).toBeNull();
  const row = await server.pool.query<{ owner_id: string; owner: string }>(
    `select owner_id, owner::text from storage.objects where bucket_id = 'inbox' and name = 'mine/a.txt'`,
  );
  expect(row.rows[0]).toEqual({ owner_id: user.id, owner: user.id });
  expect((await inbox().upload('other/a.txt', new Blob(['a']))).error).toMatchObject({ statusCode: '403' });
  // Insert alone: no reading, no upsert, no removing, no copying.
  expect((await inbox().download('mine/a.txt')).error).toBeTruthy();
  expect((await inbox().list('mine')).data).toEqual([]);
  expect((await inbox().upload('mine/a.txt', new Blob(['b']), { upsert: true })).error).toMatchObject({
    statusCode: '403',
  });
  expect((await inbox().remove(['mine/a.txt'])).data).toEqual([]);
  expect((await inbox().copy('mine/a.txt', 'mine/copy.txt')).error).toMatchObject({ statusCode: '404' });

  await policy(`create policy inbox_select on storage.objects for select to authenticated using (${own})`);
  expect(await (await inbox().download('mine/a.txt')).data?.text()).toBe('a');
  expect((await inbox().list('mine')).data?.map((o) => o.name)).toEqual(['a.txt']);
  expect((await inbox().copy('mine/a.txt', 'mine/copy.txt')).error).toBeNull();
  // Select + insert, without update: upsert onto an existing name and move are refused.
  expect((await inbox().upload('mine/a.txt', new Blob(['b']), { upsert: true })).error).toMatchObject({
    statusCode: '403',
  });
  expect((await inbox().move('mine/a.txt', 'mine/moved.txt')).error).toMatchObject({ statusCode: '403' });
  expect((await inbox().update('mine/a.txt', new Blob(['b']))).error).toBeTruthy();
  expect((await inbox().remove(['mine/a.txt'])).data).toEqual([]);

  await policy(
    `create policy inbox_update on storage.objects for update to authenticated using (${own}) with check (${own})`,
  );
  expect((await inbox().upload('mine/a.txt', new Blob(['b']), { upsert: true })).error).toBeNull();
  expect(await (await inbox().download('mine/a.txt')).data?.text()).toBe('b');
  expect((await inbox().update('mine/a.txt', new Blob(['c']))).error).toBeNull();
  expect((await inbox().move('mine/a.txt', 'mine/moved.txt')).error).toBeNull();
  // The update policy's check applies to where it moves.
  expect((await inbox().move('mine/moved.txt', 'other/moved.txt')).error).toMatchObject({
    statusCode: '403',
  });
  expect((await inbox().remove(['mine/moved.txt'])).data).toEqual([]);

  await policy(`create policy inbox_delete on storage.objects for delete to authenticated using (${own})`);
  expect((await inbox().remove(['mine/moved.txt', 'mine/copy.txt'])).data?.map((o) => o.name).sort()).toEqual(
    ['mine/copy.txt', 'mine/moved.txt'],
  );
  expect((await inbox().list('mine')).data).toEqual([]);
});

test('bucket operations follow the bucket policies', async () => {
  const storage = (user.client as SupabaseClient).storage;
  expect((await storage.getBucket('inbox')).error).toMatchObject({ statusCode: '404' });
  await policy(`create policy see_inbox on storage.buckets for select to authenticated using (id = 'inbox')`);
  expect((await storage.getBucket('inbox')).data?.id).toBe('inbox');
  expect((await storage.updateBucket('inbox', { public: true })).error).toMatchObject({ statusCode: '404' });
  expect((await storage.deleteBucket('inbox')).error).toMatchObject({ statusCode: '404' });
  expect((await server.adminClient().storage.getBucket('inbox')).data?.public).toBe(false);
  expect((await storage.createBucket('mine')).error).toMatchObject({ statusCode: '403' });
});

test('emptying a large bucket deletes, in steps, every object the caller may delete and only those', async () => {
  await server.adminClient().storage.createBucket('bulk');
  await server.pool.query(
    `insert into storage.objects (bucket_id, name)
     select 'bulk', (case when i % 2 = 0 then 'del/' else 'keep/' end) || i from generate_series(1, 3000) i`,
  );
  await policy(
    `create policy bulk_bucket on storage.buckets for select to authenticated using (id = 'bulk')`,
  );
  await policy(
    `create policy bulk_read on storage.objects for select to authenticated using (bucket_id = 'bulk')`,
  );
  await policy(
    `create policy bulk_delete on storage.objects for delete to authenticated
     using (bucket_id = 'bulk' and (storage.foldername(name))[1] = 'del')`,
  );
  const emptied = await (user.client as SupabaseClient).storage.emptyBucket('bulk');
  expect(emptied.error).toBeNull();
  const left = await server.pool.query<{ folder: string; n: string }>(
    `select (storage.foldername(name))[1] as folder, count(*) as n from storage.objects
     where bucket_id = 'bulk' group by 1`,
  );
  expect(left.rows).toEqual([{ folder: 'keep', n: '1500' }]);
  expect((await server.adminClient().storage.emptyBucket('bulk')).error).toBeNull();
  const none = await server.pool.query(`select 1 from storage.objects where bucket_id = 'bulk'`);
  expect(none.rowCount).toBe(0);
});
