// Objects through supabase-js's storage client: uploads (multipart, raw bytes, streams) with
// upsert rules, cache control, content type and metadata; downloads whole and by range; info and
// exists; list v1 and v2; move and copy within and across buckets; remove; public and private
// buckets; bucket limits enforced while streaming, leaving nothing stored.
import { request } from 'node:http';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startStorageServer, storageFetch, type StorageTestServer } from './support.js';

let server: StorageTestServer;

beforeAll(async () => {
  server = await startStorageServer();
  const storage = server.adminClient().storage;
  await storage.createBucket('docs', { public: false });
  await storage.createBucket('other', { public: false });
  await storage.createBucket('open', { public: true });
  await storage.createBucket('small', { public: false, fileSizeLimit: '1kb' });
  await storage.createBucket('images', { public: false, allowedMimeTypes: ['image/*'] });
});
afterAll(async () => server?.close());

test('multipart, raw and stream uploads store the bytes, type, cache control and metadata', async () => {
  const files = server.adminClient().storage.from('docs');
  const blob = await files.upload('a/blob.txt', new Blob(['hello blob'], { type: 'text/plain' }), {
    cacheControl: '60',
    metadata: { kind: 'note' },
  });
  expect(blob.error).toBeNull();
  expect(blob.data).toEqual({ id: expect.any(String), path: 'a/blob.txt', fullPath: 'docs/a/blob.txt' });

  const raw = await files.upload('a/raw.bin', Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]), {
    contentType: 'application/octet-stream',
    metadata: { kind: 'raw' },
  });
  expect(raw.error).toBeNull();
  const stream = await files.upload(
    'a/stream.txt',
    Readable.from([Buffer.from('streamed '), Buffer.from('text')]),
    {
      contentType: 'text/plain',
      duplex: 'half',
    },
  );
  expect(stream.error).toBeNull();

  const downloaded = await files.download('a/blob.txt');
  expect(await downloaded.data?.text()).toBe('hello blob');
  expect(Buffer.from(await (await files.download('a/raw.bin')).data!.arrayBuffer())).toEqual(
    Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]),
  );
  expect(await (await files.download('a/stream.txt')).data?.text()).toBe('streamed text');

  const info = await files.info('a/blob.txt');
  expect(info.error).toBeNull();
  expect(info.data).toMatchObject({
    name: 'a/blob.txt',
    bucketId: 'docs',
    size: 10,
    contentType: 'text/plain',
    cacheControl: 'max-age=60',
    metadata: { kind: 'note' },
    etag: expect.any(String),
    version: expect.any(String),
  });
  expect((await files.info('a/raw.bin')).data?.metadata).toEqual({ kind: 'raw' });
  expect(await files.exists('a/blob.txt')).toEqual({ data: true, error: null });
  expect((await files.exists('a/missing.txt')).data).toBe(false);

  const response = await storageFetch(server, 'GET', '/object/docs/a/blob.txt');
  expect(response.headers.get('content-type')).toBe('text/plain');
  expect(response.headers.get('cache-control')).toBe('max-age=60');
  expect(response.headers.get('etag')).toBe(info.data?.etag);
});

test('a name that exists is refused without upsert, replaced with upsert or update', async () => {
  const files = server.adminClient().storage.from('docs');
  await files.upload('b/one.txt', new Blob(['first']));
  const again = await files.upload('b/one.txt', new Blob(['second']));
  expect(again.error).toMatchObject({ statusCode: '409', message: 'The resource already exists' });
  expect(await (await files.download('b/one.txt')).data?.text()).toBe('first');

  const upserted = await files.upload('b/one.txt', new Blob(['second']), { upsert: true });
  expect(upserted.error).toBeNull();
  expect(await (await files.download('b/one.txt')).data?.text()).toBe('second');

  const updated = await files.update('b/one.txt', new Blob(['third']));
  expect(updated.error).toBeNull();
  expect(await (await files.download('b/one.txt')).data?.text()).toBe('third');
  const missing = await files.update('b/none.txt', new Blob(['x']));
  expect(missing.error).toMatchObject({ statusCode: '404', message: 'Object not found' });

  // Each replacement released the bytes it replaced: one stored file per object.
  await server.drainDeletions();
  const before = await server.storedCount();
  await files.upload('b/one.txt', new Blob(['fourth']), { upsert: true });
  await server.drainDeletions();
  expect(await server.storedCount()).toBe(before);
});

test('ranges: 206 with Content-Range, suffix ranges, 416 past the end', async () => {
  await server.adminClient().storage.from('docs').upload('c/digits.txt', Buffer.from('0123456789'), {
    contentType: 'text/plain',
  });
  const part = await storageFetch(server, 'GET', '/object/docs/c/digits.txt', {
    headers: { range: 'bytes=2-5' },
  });
  expect(part.status).toBe(206);
  expect(part.headers.get('content-range')).toBe('bytes 2-5/10');
  expect(await part.text()).toBe('2345');
  const suffix = await storageFetch(server, 'GET', '/object/docs/c/digits.txt', {
    headers: { range: 'bytes=-3' },
  });
  expect(await suffix.text()).toBe('789');
  const open = await storageFetch(server, 'GET', '/object/docs/c/digits.txt', {
    headers: { range: 'bytes=7-' },
  });
  expect(await open.text()).toBe('789');
  const past = await storageFetch(server, 'GET', '/object/docs/c/digits.txt', {
    headers: { range: 'bytes=20-' },
  });
  expect(past.status).toBe(416);
  expect(past.headers.get('content-range')).toBe('bytes */10');
  const etag = (await storageFetch(server, 'HEAD', '/object/docs/c/digits.txt')).headers.get('etag')!;
  const cached = await storageFetch(server, 'GET', '/object/docs/c/digits.txt', {
    headers: { 'if-none-match': etag },
  });
  expect(cached.status).toBe(304);
});

test('bucket limits are enforced while streaming and leave nothing stored', async () => {
  const before = await server.storedCount();
  const small = server.adminClient().storage.from('small');
  const tooBig = await small.upload('big.bin', new Blob([Buffer.alloc(2000)]));
  // As the storage server answers: HTTP 400, the body's statusCode 413.
  expect(tooBig.error).toMatchObject({
    status: 400,
    statusCode: '413',
    message: 'The object exceeded the maximum allowed size',
  });
  // A stream declares no length: it is refused once 1 kB has passed.
  const streamed = await small.upload(
    'big-stream.bin',
    Readable.from([Buffer.alloc(800), Buffer.alloc(800)]),
    {
      duplex: 'half',
    },
  );
  expect(streamed.error).toMatchObject({ statusCode: '413' });
  expect((await small.upload('fits.bin', new Blob([Buffer.alloc(900)]))).error).toBeNull();

  const images = server.adminClient().storage.from('images');
  const text = await images.upload('note.txt', new Blob(['text'], { type: 'text/plain' }));
  expect(text.error).toMatchObject({ statusCode: '415', message: 'mime type text/plain is not supported' });
  expect((await images.upload('pic.png', new Blob(['png'], { type: 'image/png' }))).error).toBeNull();

  expect((await small.list()).data?.map((o) => o.name)).toEqual(['fits.bin']);
  expect(await server.storedCount()).toBe(before + 2);
});

test('public buckets serve reads to anyone; private ones only through the policies', async () => {
  const admin = server.adminClient().storage;
  await admin.from('open').upload('logo.txt', new Blob(['public bytes']));
  await admin.from('docs').upload('secret.txt', new Blob(['private bytes']));

  const publicUrl = server.client().storage.from('open').getPublicUrl('logo.txt').data.publicUrl;
  const served = await fetch(publicUrl);
  expect(served.status).toBe(200);
  expect(await served.text()).toBe('public bytes');
  const anon = server.client().storage;
  expect(await (await anon.from('open').download('logo.txt')).data?.text()).toBe('public bytes');

  const privateUrl = server.client().storage.from('docs').getPublicUrl('secret.txt').data.publicUrl;
  const refused = await fetch(privateUrl);
  expect(refused.status).toBe(400);
  expect(await refused.json()).toMatchObject({ statusCode: '404', message: 'Bucket not found' });
  expect((await anon.from('docs').download('secret.txt')).error).toBeTruthy();
  // Public means readable, not writable: uploads still need a policy.
  const write = await anon.from('open').upload('defaced.txt', new Blob(['x']));
  expect(write.error).toMatchObject({ statusCode: '403' });
});

test('list v1 (one level, folders first) and v2 (cursor pages, delimiter folders)', async () => {
  const files = server.adminClient().storage.from('other');
  for (const name of ['l/a.txt', 'l/b.txt', 'l/sub/c.txt', 'l/sub/d.txt', 'l/e.txt']) {
    await files.upload(name, new Blob([name]));
  }
  const v1 = await files.list('l');
  expect(v1.data?.map((o) => [o.name, o.id === null])).toEqual([
    ['sub', true],
    ['a.txt', false],
    ['b.txt', false],
    ['e.txt', false],
  ]);
  expect((await files.list('l', { limit: 2, offset: 1 })).data?.map((o) => o.name)).toEqual([
    'a.txt',
    'b.txt',
  ]);
  expect((await files.list('l', { search: 'B' })).data?.map((o) => o.name)).toEqual(['b.txt']);
  expect(
    (await files.list('l', { sortBy: { column: 'name', order: 'desc' } })).data?.map((o) => o.name),
  ).toEqual(['sub', 'e.txt', 'b.txt', 'a.txt']);

  const all = await files.listV2({ prefix: 'l/' });
  expect(all.error).toBeNull();
  expect(all.data?.objects.map((o) => o.name)).toEqual([
    'l/a.txt',
    'l/b.txt',
    'l/e.txt',
    'l/sub/c.txt',
    'l/sub/d.txt',
  ]);
  const folders = await files.listV2({ prefix: 'l/', with_delimiter: true });
  expect(folders.data?.folders).toEqual([{ key: 'l/sub', name: 'l/sub/' }]);
  const names: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  for (;;) {
    const page = await files.listV2({ prefix: 'l/', limit: 2, ...(cursor ? { cursor } : {}) });
    pages++;
    names.push(...page.data!.objects.map((o) => o.name));
    if (!page.data!.hasNext) break;
    cursor = page.data!.nextCursor;
  }
  expect(pages).toBe(3);
  expect(names).toEqual(['l/a.txt', 'l/b.txt', 'l/e.txt', 'l/sub/c.txt', 'l/sub/d.txt']);
  const bad = await files.listV2({ prefix: 'l/', cursor: 'not-a-cursor' });
  expect(bad.error).toMatchObject({ statusCode: '400' });
});

test('move and copy, within and across buckets; remove answers what it removed', async () => {
  const docs = server.adminClient().storage.from('docs');
  await docs.upload('m/source.txt', new Blob(['moving']));
  expect(await docs.move('m/source.txt', 'm/moved.txt')).toEqual({
    data: { message: 'Successfully moved' },
    error: null,
  });
  expect(await (await docs.download('m/moved.txt')).data?.text()).toBe('moving');
  expect((await docs.download('m/source.txt')).error).toBeTruthy();
  const across = await docs.move('m/moved.txt', 'from-docs.txt', { destinationBucket: 'other' });
  expect(across.error).toBeNull();
  const other = server.adminClient().storage.from('other');
  expect(await (await other.download('from-docs.txt')).data?.text()).toBe('moving');

  const copied = await other.copy('from-docs.txt', 'copy.txt');
  expect(copied).toEqual({ data: { path: 'other/copy.txt' }, error: null });
  const copiedAcross = await other.copy('from-docs.txt', 'm/copy-back.txt', { destinationBucket: 'docs' });
  expect(copiedAcross.error).toBeNull();
  expect(await (await docs.download('m/copy-back.txt')).data?.text()).toBe('moving');
  const onto = await other.copy('from-docs.txt', 'copy.txt');
  expect(onto.error).toMatchObject({ statusCode: '409' });
  expect((await other.move('nothing-here.txt', 'x.txt')).error).toMatchObject({ statusCode: '404' });
  expect((await docs.move('m/copy-back.txt', 'x.txt', { destinationBucket: 'no-such' })).error).toMatchObject(
    {
      statusCode: '404',
      message: 'Bucket not found',
    },
  );

  const removed = await other.remove(['copy.txt', 'from-docs.txt', 'never-was.txt']);
  expect(removed.error).toBeNull();
  expect(removed.data?.map((o) => o.name).sort()).toEqual(['copy.txt', 'from-docs.txt']);
  expect((await other.download('copy.txt')).error).toBeTruthy();
  // The copy had bytes of its own: removing the original left them intact.
  expect(await (await docs.download('m/copy-back.txt')).data?.text()).toBe('moving');
});

test('bad names and bodies get a clear error and change nothing', async () => {
  const docs = server.adminClient().storage.from('docs');
  // Encoded so the client sends them as they are, not normalised away.
  for (const name of ['a%2F..%2Fescape.txt', 'a%2F%2Fb.txt', 'back%5Cslash.txt', 'bad%ZZ']) {
    const result = await storageFetch(server, 'POST', `/object/docs/${name}`, { body: 'x' });
    expect(result.status, name).toBe(400);
  }
  const removeTooMany = await docs.remove(Array.from({ length: 1001 }, (_, i) => `f${i}`));
  expect(removeTooMany.error).toMatchObject({ statusCode: '400' });
  const noBucket = await server
    .adminClient()
    .storage.from('no-such')
    .upload('x.txt', new Blob(['x']));
  expect(noBucket.error).toMatchObject({ statusCode: '404', message: 'Bucket not found' });
  const unknown = await storageFetch(server, 'GET', '/nothing');
  expect(unknown.status).toBe(404);
});

test('an upload cut off mid-body leaves no object and no bytes', async () => {
  const before = await server.storedCount();
  const url = new URL(`${server.url}/storage/v1/object/docs/cut/off.bin`);
  await new Promise<void>((resolve) => {
    const req = request(url, {
      method: 'POST',
      headers: {
        apikey: server.config.projectApiKey,
        authorization: `Bearer ${server.config.serviceRoleKey}`,
        'content-type': 'application/octet-stream',
        'content-length': '1000000',
      },
    });
    req.on('error', () => resolve());
    req.write(Buffer.alloc(64 * 1024));
    setTimeout(() => {
      req.destroy();
      resolve();
    }, 200);
  });
  // Give the server a moment to see the connection go.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const files = server.adminClient().storage.from('docs');
  expect((await files.exists('cut/off.bin')).data).toBe(false);
  expect((await files.list('cut')).data).toEqual([]);
  expect(await server.storedCount()).toBe(before);
  // The name is free: a whole upload to it succeeds.
  expect((await files.upload('cut/off.bin', new Blob(['whole']))).error).toBeNull();
});

test('an uploaded page is served sandboxed: it cannot act as the app whose origin serves it', async () => {
  const admin = server.adminClient().storage;
  await admin
    .from('open')
    .upload('page.html', new Blob(['<script>fetch("/rest/v1/profiles")</script>'], { type: 'text/html' }));
  for (const url of [
    admin.from('open').getPublicUrl('page.html').data.publicUrl,
    (await admin.from('open').createSignedUrl('page.html', 60)).data!.signedUrl,
  ]) {
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; sandbox",
    );
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  }
});
