// Signed URLs: download URLs minted only for objects the caller may read, bound to one object,
// expiring, usable without any credentials; batch signing; signed upload URLs checked against
// the caller's policies when minted, usable once unless minted with upsert, and never usable as
// download URLs (or the other way round).
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startStorageServer, type StorageTestServer } from './support.js';

let server: StorageTestServer;

beforeAll(async () => {
  server = await startStorageServer();
  const storage = server.adminClient().storage;
  await storage.createBucket('private', { public: false });
  await storage.from('private').upload('a/one.txt', new Blob(['one']));
  await storage.from('private').upload('a/two.txt', new Blob(['two']));
});
afterAll(async () => server?.close());

const files = () => server.adminClient().storage.from('private');

test('a signed download URL serves that object to anyone until it expires', async () => {
  const signed = await files().createSignedUrl('a/one.txt', 60);
  expect(signed.error).toBeNull();
  expect(signed.data?.signedUrl).toMatch(/\/storage\/v1\/object\/sign\/private\/a\/one\.txt\?token=/);
  const served = await fetch(signed.data!.signedUrl);
  expect(served.status).toBe(200);
  expect(await served.text()).toBe('one');

  const asDownload = await files().createSignedUrl('a/one.txt', 60, { download: 'named.txt' });
  const attachment = await fetch(asDownload.data!.signedUrl);
  expect(attachment.headers.get('content-disposition')).toContain('named.txt');

  const ranged = await fetch(signed.data!.signedUrl, { headers: { range: 'bytes=1-' } });
  expect(ranged.status).toBe(206);
  expect(await ranged.text()).toBe('ne');
});

test('a signed URL is bound to its object: another path with its token is refused', async () => {
  const signed = await files().createSignedUrl('a/one.txt', 60);
  const token = new URL(signed.data!.signedUrl).searchParams.get('token')!;
  const other = await fetch(`${server.url}/storage/v1/object/sign/private/a/two.txt?token=${token}`);
  expect(other.status).toBe(400);
  expect(await other.json()).toMatchObject({ statusCode: '400', code: 'InvalidSignature' });
  const tampered = await fetch(`${server.url}/storage/v1/object/sign/private/a/one.txt?token=${token}x`);
  expect(tampered.status).toBe(400);
  const none = await fetch(`${server.url}/storage/v1/object/sign/private/a/one.txt`);
  expect(none.status).toBe(400);
  // A user's access token is not a signed URL token.
  const accessToken = server.config.serviceRoleKey;
  const wrongKind = await fetch(
    `${server.url}/storage/v1/object/sign/private/a/one.txt?token=${accessToken}`,
  );
  expect(wrongKind.status).toBe(400);
});

test('an expired signed URL is refused with ExpiredToken', async () => {
  const signed = await files().createSignedUrl('a/one.txt', 1);
  await new Promise((resolve) => setTimeout(resolve, 2100));
  const expired = await fetch(signed.data!.signedUrl);
  expect(expired.status).toBe(400);
  expect(await expired.json()).toEqual({
    statusCode: '400',
    code: 'ExpiredToken',
    error: 'Expired Token',
    message: 'The provided token has expired.',
  });
});

test('expiry bounds and missing objects get clear errors', async () => {
  expect((await files().createSignedUrl('a/one.txt', 0)).error).toMatchObject({ statusCode: '400' });
  const tooLong = await files().createSignedUrl('a/one.txt', server.config.storage.signedUrlMaxSeconds + 1);
  expect(tooLong.error?.message).toMatch(/STORAGE_SIGNED_URL_MAX_SECONDS/);
  expect((await files().createSignedUrl('a/none.txt', 60)).error).toMatchObject({ statusCode: '404' });
  // Anonymous callers cannot sign what they cannot read.
  const anon = await server.client().storage.from('private').createSignedUrl('a/one.txt', 60);
  expect(anon.error).toMatchObject({ statusCode: '404' });
});

test('batch signing answers each path, with an error for those out of reach', async () => {
  const batch = await files().createSignedUrls(['a/one.txt', 'a/missing.txt', 'a/two.txt'], 60);
  expect(batch.error).toBeNull();
  expect(batch.data?.map((e) => [e.path, e.error])).toEqual([
    ['a/one.txt', null],
    ['a/missing.txt', 'Either the object does not exist or you do not have access to it'],
    ['a/two.txt', null],
  ]);
  expect(await (await fetch(batch.data![2]!.signedUrl!)).text()).toBe('two');
});

test('a signed upload URL uploads once; with upsert it may replace; it is not a download URL', async () => {
  const signed = await files().createSignedUploadUrl('up/new.txt');
  expect(signed.error).toBeNull();
  const anon = server.client().storage.from('private');
  const uploaded = await anon.uploadToSignedUrl('up/new.txt', signed.data!.token, new Blob(['uploaded']));
  expect(uploaded.error).toBeNull();
  expect(uploaded.data).toMatchObject({ path: 'up/new.txt', fullPath: 'private/up/new.txt' });
  expect(await (await files().download('up/new.txt')).data?.text()).toBe('uploaded');
  const twice = await anon.uploadToSignedUrl('up/new.txt', signed.data!.token, new Blob(['again']));
  expect(twice.error).toMatchObject({ statusCode: '409', message: 'The resource already exists' });

  const upsert = await files().createSignedUploadUrl('up/new.txt', { upsert: true });
  expect(
    (await anon.uploadToSignedUrl('up/new.txt', upsert.data!.token, new Blob(['replaced']))).error,
  ).toBeNull();
  expect(await (await files().download('up/new.txt')).data?.text()).toBe('replaced');

  // Bound to its path, and of the upload scope only.
  const elsewhere = await anon.uploadToSignedUrl('up/other.txt', signed.data!.token, new Blob(['x']));
  expect(elsewhere.error).toMatchObject({ statusCode: '400' });
  const asDownload = await fetch(
    `${server.url}/storage/v1/object/sign/private/up/new.txt?token=${signed.data!.token}`,
  );
  expect(asDownload.status).toBe(400);
  expect(await asDownload.json()).toMatchObject({ message: 'Token is not scoped for download' });
  const download = await files().createSignedUrl('a/one.txt', 60);
  const downloadToken = new URL(download.data!.signedUrl).searchParams.get('token')!;
  expect((await anon.uploadToSignedUrl('a/one.txt', downloadToken, new Blob(['x']))).error).toMatchObject({
    statusCode: '400',
  });
  expect(await (await files().download('a/one.txt')).data?.text()).toBe('one');

  // Minting needs the caller's insert permission now.
  const refused = await server.client().storage.from('private').createSignedUploadUrl('up/anon.txt');
  expect(refused.error).toMatchObject({ statusCode: '403' });
});
