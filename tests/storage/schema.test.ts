// The storage schema as Supabase has it, so policies written for Supabase run here: its helpers,
// the columns policies read, row-level security enabled and forced, Supabase's grants, and the
// backend key the database and the API agree on.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { objectKey } from '../../src/server/storage/keys.js';
import { startStorageServer, type StorageTestServer } from './support.js';

let server: StorageTestServer;

beforeAll(async () => {
  server = await startStorageServer();
});
afterAll(async () => server?.close());

test('foldername, filename and extension answer as on Supabase', async () => {
  const { rows } = await server.pool.query(
    `select n, storage.foldername(n) as folders, storage.filename(n) as file, storage.extension(n) as ext
     from unnest(array['a/b/c.png', 'c.tar.gz', 'dir/noext', 'x/.hidden']) as n`,
  );
  expect(rows).toEqual([
    { n: 'a/b/c.png', folders: ['a', 'b'], file: 'c.png', ext: 'png' },
    { n: 'c.tar.gz', folders: [], file: 'c.tar.gz', ext: 'gz' },
    { n: 'dir/noext', folders: ['dir'], file: 'noext', ext: '' },
    { n: 'x/.hidden', folders: ['x'], file: '.hidden', ext: 'hidden' },
  ]);
});

test('objects carry path_tokens and level from their name', async () => {
  await server.adminClient().storage.createBucket('shape');
  await server
    .adminClient()
    .storage.from('shape')
    .upload('one/two/three.txt', new Blob(['3']));
  const { rows } = await server.pool.query(
    `select path_tokens, level, owner_id, metadata->>'size' as size, metadata->>'mimetype' as type
     from storage.objects where bucket_id = 'shape'`,
  );
  expect(rows).toEqual([
    {
      path_tokens: ['one', 'two', 'three.txt'],
      level: 3,
      owner_id: null,
      size: '1',
      type: 'application/octet-stream',
    },
  ]);
});

test('row-level security is enabled and forced on both tables; the API roles hold Supabase grants', async () => {
  const { rows } = await server.pool.query(
    `select c.relname, c.relrowsecurity, c.relforcerowsecurity,
            has_table_privilege('anon', c.oid, 'select, insert, update, delete') as anon,
            has_table_privilege('authenticated', c.oid, 'select, insert, update, delete') as authenticated
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = 'storage' and c.relkind = 'r' order by c.relname`,
  );
  expect(rows).toEqual([
    { relname: 'buckets', relrowsecurity: true, relforcerowsecurity: true, anon: true, authenticated: true },
    { relname: 'objects', relrowsecurity: true, relforcerowsecurity: true, anon: true, authenticated: true },
  ]);
  // The queue of bytes to delete and the plan counters are out of the API roles' reach.
  const internal = await server.pool.query(
    `select bool_or(has_table_privilege('authenticated', t, 'select')) as readable
     from unnest(array['internal.storage_deletions', 'internal.workspace_storage_usage',
                       'internal.plan_storage_limits', 'internal.workspace_buckets']::regclass[]) as t`,
  );
  expect(internal.rows[0].readable).toBe(false);
});

test('the database names an object version by the same key as the API', async () => {
  const version = '0f8e6a1c-2b3d-4e5f-8a9b-0c1d2e3f4a5b';
  const { rows } = await server.pool.query<{ key: string }>('select storage.object_key($1) as key', [
    version,
  ]);
  expect(rows[0]!.key).toBe(objectKey(version));
});
