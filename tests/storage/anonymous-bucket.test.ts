// What supabase-js's own integration test proves of storage, on our server: with a private bucket
// whose one policy opens it to every role (`for all using (bucket_id = ...)`, no `to` clause),
// the public key alone (no session) uploads a Blob with upsert, lists the bucket's root and sees
// the file, and removes it; the policy is what allows it, and the removal really removes it.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startStorageServer, type StorageTestServer } from './support.js';

let server: StorageTestServer;

beforeAll(async () => {
  server = await startStorageServer();
  // The fixture supabase-js's test assumes: a private bucket and a policy for PUBLIC.
  await server.pool.query(
    `insert into storage.buckets (id, name, public) values ('test-bucket', 'test-bucket', false)`,
  );
});
afterAll(async () => server?.close());

const bucket = () => server.client().storage.from('test-bucket');
const file = () => new Blob(['Hello, Supabase Storage!'], { type: 'text/plain' });

test('without the policy, the public key can neither upload nor list', async () => {
  expect((await bucket().upload('test-file.txt', file(), { upsert: true })).error).toMatchObject({
    statusCode: '403',
  });
  expect((await bucket().list()).data).toEqual([]);
});

test('with it, the public key uploads, lists, upserts and removes, as supabase-js expects', async () => {
  await server.pool.query(
    `create policy "test-bucket public access" on storage.objects for all using (bucket_id = 'test-bucket')`,
  );
  const stored = await server.storedCount();

  const uploaded = await bucket().upload('test-file.txt', file(), { upsert: true });
  expect(uploaded.error).toBeNull();
  expect(uploaded.data).toMatchObject({ path: 'test-file.txt', fullPath: 'test-bucket/test-file.txt' });
  // Uploaded again with upsert: replaced, not refused.
  expect((await bucket().upload('test-file.txt', file(), { upsert: true })).error).toBeNull();

  const listed = await bucket().list();
  expect(listed.error).toBeNull();
  expect(listed.data?.map((f) => f.name)).toContain('test-file.txt');
  const entry = listed.data!.find((f) => f.name === 'test-file.txt')!;
  expect(entry.metadata).toMatchObject({ size: 24, mimetype: 'text/plain' });
  // A Blob's bytes arrive as they were.
  expect(await (await bucket().download('test-file.txt')).data?.text()).toBe('Hello, Supabase Storage!');
  // Uploaded without a session: no owner.
  const row = await server.pool.query<{ owner_id: string | null }>(
    `select owner_id from storage.objects where bucket_id = 'test-bucket' and name = 'test-file.txt'`,
  );
  expect(row.rows).toEqual([{ owner_id: null }]);

  const removed = await bucket().remove(['test-file.txt']);
  expect(removed.error).toBeNull();
  expect(removed.data?.map((f) => f.name)).toEqual(['test-file.txt']);
  expect((await bucket().list()).data?.map((f) => f.name)).not.toContain('test-file.txt');
  // The bytes go too (the replaced version's and the removed one's).
  await server.drainDeletions();
  expect(await server.storedCount()).toBe(stored);
});
