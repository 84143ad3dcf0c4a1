// Buckets through supabase-js: create with options ("1mb"-style sizes, MIME wildcards), get,
// list, update, empty and delete, and the errors storage answers (its body, its statuses), each
// leaving nothing changed.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { withRls } from '../../src/server/db/transactions.js';
import { startStorageServer, storageFetch, type StorageTestServer } from './support.js';

let server: StorageTestServer;

beforeAll(async () => {
  server = await startStorageServer();
});
afterAll(async () => server?.close());

test('a bucket is created, read, listed, updated and deleted with its options', async () => {
  const storage = server.adminClient().storage;
  const created = await storage.createBucket('avatars', {
    public: true,
    fileSizeLimit: '1mb',
    allowedMimeTypes: ['image/*'],
  });
  expect(created).toEqual({ data: { name: 'avatars' }, error: null });

  const got = await storage.getBucket('avatars');
  expect(got.error).toBeNull();
  expect(got.data).toEqual({
    id: 'avatars',
    name: 'avatars',
    owner: null,
    public: true,
    file_size_limit: 1_000_000,
    allowed_mime_types: ['image/*'],
    created_at: expect.any(String),
    updated_at: expect.any(String),
  });

  const listed = await storage.listBuckets();
  expect(listed.data?.map((b) => b.id)).toEqual(expect.arrayContaining(['avatars', 'workspace-files']));
  const searched = await storage.listBuckets({ search: 'avat' });
  expect(searched.data?.map((b) => b.id)).toEqual(['avatars', 'profile-avatars']);

  const updated = await storage.updateBucket('avatars', { public: false });
  expect(updated).toEqual({ data: { message: 'Successfully updated' }, error: null });
  const after = await storage.getBucket('avatars');
  expect(after.data).toMatchObject({
    public: false,
    file_size_limit: 1_000_000,
    allowed_mime_types: ['image/*'],
  });

  // An object row without bytes is enough to make the bucket non-empty.
  await withRls(server.pool, { role: 'service_role' }, (tx) =>
    tx.query(`insert into storage.objects (bucket_id, name) values ('avatars', 'a.png')`),
  );
  const notEmpty = await storage.deleteBucket('avatars');
  expect(notEmpty.error).toMatchObject({
    message: 'The bucket you tried to delete is not empty',
    status: 400,
    statusCode: '409',
  });
  const emptied = await storage.emptyBucket('avatars');
  expect(emptied.data).toEqual({
    message: 'Empty bucket has been queued. Completion may take up to an hour.',
  });
  expect((await storage.from('avatars').list()).data).toEqual([]);
  expect(await storage.deleteBucket('avatars')).toEqual({
    data: { message: 'Successfully deleted' },
    error: null,
  });
  expect((await storage.getBucket('avatars')).error).toMatchObject({
    message: 'Bucket not found',
    statusCode: '404',
  });
});

test('storage error bodies: statusCode as a string, code, error and message, HTTP 400', async () => {
  const response = await storageFetch(server, 'GET', '/bucket/no-such-bucket');
  expect(response.status).toBe(400);
  expect(await response.json()).toEqual({
    statusCode: '404',
    code: 'NoSuchBucket',
    error: 'Bucket not found',
    message: 'Bucket not found',
  });
});

test('bad bucket input is refused with a clear error and creates nothing', async () => {
  const storage = server.adminClient().storage;
  const badName = await storage.createBucket('no/slashes');
  expect(badName.error).toMatchObject({ statusCode: '400' });
  expect(badName.error?.message).toMatch(/Bucket name invalid/);
  const badSize = await storage.createBucket('sized', { public: false, fileSizeLimit: 'lots' });
  expect(badSize.error?.message).toMatch(/Invalid file size format/);
  const badMime = await storage.createBucket('typed', { public: false, allowedMimeTypes: ['not a type'] });
  expect(badMime.error?.message).toMatch(/Invalid mime type/);
  const malformed = await storageFetch(server, 'POST', '/bucket', {
    body: '{"id":',
    headers: { 'content-type': 'application/json' },
  });
  expect(malformed.status).toBe(400);
  expect((await storage.listBuckets()).data?.map((b) => b.id).sort()).toEqual([
    'profile-avatars',
    'project-files',
    'workspace-files',
    'workspace-logos',
  ]);

  await storage.createBucket('twice');
  const duplicate = await storage.createBucket('twice');
  expect(duplicate.error).toMatchObject({ statusCode: '409', message: 'The resource already exists' });
});

test('anonymous and signed-in callers see no bucket that no policy lets them see', async () => {
  await server.adminClient().storage.createBucket('private-one');
  const anon = await server.client().storage.listBuckets();
  expect(anon.data?.map((b) => b.id)).toEqual([]);
  const created = await server.client().storage.createBucket('anon-made');
  expect(created.error).toMatchObject({
    statusCode: '403',
    message: 'new row violates row-level security policy',
  });
  expect((await server.adminClient().storage.getBucket('anon-made')).error?.message).toBe('Bucket not found');
});

test('browser apps on other origins may call storage: preflights allow its headers', async () => {
  const response = await fetch(`${server.url}/storage/v1/object/any/file.txt`, {
    method: 'OPTIONS',
    headers: {
      origin: 'https://app.example.com',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, x-upsert, x-metadata, cache-control',
    },
  });
  expect(response.status).toBe(204);
  expect(response.headers.get('access-control-allow-origin')).toBe('*');
  const allowed = response.headers.get('access-control-allow-headers') ?? '';
  for (const header of ['authorization', 'apikey', 'x-upsert', 'x-metadata', 'cache-control', 'range']) {
    expect(allowed).toContain(header);
  }
  const answered = await storageFetch(server, 'GET', '/bucket');
  expect(answered.headers.get('access-control-allow-origin')).toBe('*');
  expect(answered.headers.get('x-content-type-options')).toBe('nosniff');
});

test('a token that cannot be verified is refused as storage refuses it, and changes nothing', async () => {
  const forged = await storageFetch(server, 'POST', '/bucket', {
    bearer: 'eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.forged',
    body: JSON.stringify({ id: 'forged' }),
    headers: { 'content-type': 'application/json' },
  });
  expect(forged.status).toBe(400);
  expect(await forged.json()).toMatchObject({
    statusCode: '403',
    code: 'AccessDenied',
    error: 'Unauthorized',
  });
  expect((await server.adminClient().storage.getBucket('forged')).error?.message).toBe('Bucket not found');
});
