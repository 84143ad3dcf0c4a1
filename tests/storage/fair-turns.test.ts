// Storage's database work takes fair turns like the data API's: one caller sending more requests
// at once than may wait is refused with storage's 429 body, and the others are answered.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startStorageServer, storageFetch, type StorageTestServer } from './support.js';

let server: StorageTestServer;

beforeAll(async () => {
  server = await startStorageServer();
  await server.adminClient().storage.createBucket('busy');
});
afterAll(async () => server?.close());

test('one caller cannot queue without bound: the excess gets 429 SlowDown with Retry-After', async () => {
  const responses = await Promise.all(
    Array.from({ length: 120 }, () =>
      storageFetch(server, 'POST', '/object/list/busy', {
        body: JSON.stringify({ prefix: '' }),
        headers: { 'content-type': 'application/json' },
      }),
    ),
  );
  const refused = responses.filter((r) => r.status === 429);
  const answered = responses.filter((r) => r.status === 200);
  expect(refused.length).toBeGreaterThan(0);
  expect(answered.length).toBeGreaterThan(0);
  expect(refused.length + answered.length).toBe(120);
  expect(refused[0]!.headers.get('retry-after')).toBe('1');
  expect(await refused[0]!.json()).toMatchObject({ statusCode: '429', code: 'SlowDown' });
  // Another caller is served meanwhile and after.
  expect((await server.client().storage.from('busy').list()).error).toBeNull();
});
