// Image transformations at /storage/v1/render/image, as supabase-js asks for them: resized,
// re-encoded renderings checked by decoding them (dimensions, format, quality), reused from the
// cache and never stale after an overwrite, read under the same rules as downloads (policies,
// public buckets, signed URLs carrying their transformations), bad options and hostile files
// (a decompression bomb, too many bytes, not an image) refused with storage's errors, and the
// feature switched off answering as an unknown route.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';
import type { SupabaseClient } from '@supabase/supabase-js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { signUp, type SignedIn } from '../support/workspaces.js';
import { startStorageServer, storageFetch, type StorageTestServer } from './support.js';

let server: StorageTestServer;
let cacheDir: string;
let user: SignedIn;
let photo: Buffer;

/** A photo-like JPEG (noise, so encoders and quality matter) of the given size. */
async function jpeg(width: number, height: number, seed = 1): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = ((i * 2654435761 * seed) >>> 24) & 255;
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** A PNG whose header claims width x height pixels, with almost no data: a decompression bomb. */
function pngBomb(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8); // 8-bit grey, no interlace
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.alloc(1 << 20))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

async function decoded(response: Response) {
  expect(response.status, response.headers.get('content-type') ?? '').toBe(200);
  const body = Buffer.from(await response.arrayBuffer());
  const meta = await sharp(body).metadata();
  return { body, format: meta.format, width: meta.width, height: meta.height, response };
}

async function cachedFiles(): Promise<string[]> {
  const files: string[] = [];
  for (const shard of await readdir(cacheDir).catch(() => [] as string[])) {
    for (const name of await readdir(path.join(cacheDir, shard)))
      files.push(path.join(cacheDir, shard, name));
  }
  return files;
}

const render = (route: string, headers: Record<string, string> = {}) =>
  storageFetch(server, 'GET', `/render/image/${route}`, { headers });

beforeAll(async () => {
  cacheDir = await mkdtemp(path.join(tmpdir(), 'tenantry-image-cache-'));
  server = await startStorageServer({
    STORAGE_IMAGE_CACHE_DIR: cacheDir,
    STORAGE_IMAGE_MAX_DIMENSION: '1000',
    STORAGE_IMAGE_MAX_SOURCE_BYTES: '3000000',
  });
  photo = await jpeg(800, 600);
  const storage = server.adminClient().storage;
  await storage.createBucket('photos', { public: false });
  await storage.createBucket('open', { public: true });
  await storage.from('photos').upload('cat.jpg', photo, { contentType: 'image/jpeg' });
  await storage.from('open').upload('cat.jpg', photo, { contentType: 'image/jpeg' });
  user = await signUp(server, 'images');
}, 60_000);
afterAll(async () => {
  await server?.close();
  await rm(cacheDir, { recursive: true, force: true });
});

describe('renderings', () => {
  test('supabase-js downloads a resized image; each resize mode gives its dimensions', async () => {
    const photos = server.adminClient().storage.from('photos');
    const cover = await photos.download('cat.jpg', { transform: { width: 200, height: 100 } });
    expect(cover.error).toBeNull();
    expect(cover.data?.type).toBe('image/jpeg');
    const coverMeta = await sharp(Buffer.from(await cover.data!.arrayBuffer())).metadata();
    expect([coverMeta.format, coverMeta.width, coverMeta.height]).toEqual(['jpeg', 200, 100]);

    const contain = await decoded(
      await render('authenticated/photos/cat.jpg?width=200&height=200&resize=contain'),
    );
    expect([contain.width, contain.height]).toEqual([200, 150]);
    expect(contain.response.headers.get('x-transformations')).toBe('height:200,width:200,resizing_type:fit');
    const fill = await decoded(await render('authenticated/photos/cat.jpg?width=200&height=200&resize=fill'));
    expect([fill.width, fill.height]).toEqual([200, 200]);
    const widthOnly = await decoded(await render('authenticated/photos/cat.jpg?width=400'));
    expect([widthOnly.width, widthOnly.height]).toEqual([400, 300]);
    // Never enlarged, and asked sizes are clamped to STORAGE_IMAGE_MAX_DIMENSION (1000 here).
    const huge = await decoded(await render('authenticated/photos/cat.jpg?width=99999'));
    expect([huge.width, huge.height]).toEqual([800, 600]);
    expect(huge.response.headers.get('x-transformations')).toBe('width:1000,resizing_type:fill');
  });

  test('format: webp when asked or accepted, the source format for origin; quality changes the bytes', async () => {
    const asked = await decoded(await render('authenticated/photos/cat.jpg?width=100&format=webp'));
    expect(asked.format).toBe('webp');
    expect(asked.response.headers.get('content-type')).toBe('image/webp');
    const accepted = await decoded(
      await render('authenticated/photos/cat.jpg?width=100', { accept: 'image/avif,image/webp,*/*' }),
    );
    expect(accepted.format).toBe('webp');
    expect(accepted.response.headers.get('vary')).toBe('Accept');
    const origin = await decoded(
      await render('authenticated/photos/cat.jpg?width=100&format=origin', { accept: 'image/webp' }),
    );
    expect(origin.format).toBe('jpeg');
    const refusedWebp = await decoded(
      await render('authenticated/photos/cat.jpg?width=100', { accept: 'image/webp;q=0, */*' }),
    );
    expect(refusedWebp.format).toBe('jpeg');

    const low = await decoded(await render('authenticated/photos/cat.jpg?width=300&quality=20'));
    const high = await decoded(await render('authenticated/photos/cat.jpg?width=300&quality=100'));
    expect([low.width, high.width]).toEqual([300, 300]);
    expect(low.body.length * 2).toBeLessThan(high.body.length);
  });

  test('a public bucket renders for anyone; the object headers come along', async () => {
    const url = server
      .client()
      .storage.from('open')
      .getPublicUrl('cat.jpg', {
        transform: { width: 50, height: 50 },
      }).data.publicUrl;
    expect(url).toContain('/storage/v1/render/image/public/open/cat.jpg?width=50&height=50');
    const got = await decoded(await fetch(url));
    expect([got.format, got.width, got.height]).toEqual(['jpeg', 50, 50]);
    expect(got.response.headers.get('cache-control')).toBe('max-age=3600');
    const etag = got.response.headers.get('etag');
    expect(etag).toBeTruthy();
    expect(got.response.headers.get('content-security-policy')).toContain('sandbox');
    const unchanged = await fetch(url, { headers: { 'if-none-match': etag! } });
    expect(unchanged.status).toBe(304);
    const attachment = await fetch(`${url}&download=small.jpg`);
    expect(attachment.headers.get('content-disposition')).toContain('small.jpg');
    // The private bucket is not public, whatever the route says.
    const notPublic = await fetch(url.replace('/public/open/', '/public/photos/'));
    expect(notPublic.status).toBe(400);
    expect(await notPublic.json()).toMatchObject({ statusCode: '404', code: 'NoSuchBucket' });
  });
});

describe('the cache', () => {
  test('the second request is answered from the cache; an overwrite is never answered stale', async () => {
    const photos = server.adminClient().storage.from('photos');
    await photos.upload('cache/cat.jpg', photo, { contentType: 'image/jpeg' });
    const route = 'authenticated/photos/cache/cat.jpg?width=120&height=90';
    const before = new Set(await cachedFiles());
    const first = await decoded(await render(route));
    expect([first.width, first.height]).toEqual([120, 90]);
    const added = (await cachedFiles()).filter((f) => !before.has(f));
    expect(added).toHaveLength(1);

    // Whatever the cache holds under that key is what the next request gets: it was not rendered again.
    const marker = await sharp({ create: { width: 7, height: 7, channels: 3, background: '#0f0' } })
      .png()
      .toBuffer();
    await writeFile(added[0]!, Buffer.concat([Buffer.from('image/png\n'), marker]));
    const second = await decoded(await render(route));
    expect([second.format, second.width, second.height]).toEqual(['png', 7, 7]);

    // A new version of the object is a new key: rendered from the new bytes.
    const square = await jpeg(400, 400, 3);
    expect(
      (await photos.upload('cache/cat.jpg', square, { upsert: true, contentType: 'image/jpeg' })).error,
    ).toBeNull();
    const third = await decoded(
      await render('authenticated/photos/cache/cat.jpg?width=120&height=120&resize=contain'),
    );
    expect([third.format, third.width, third.height]).toEqual(['jpeg', 120, 120]);
    const again = await decoded(await render(route));
    expect([again.format, again.width, again.height]).toEqual(['jpeg', 120, 90]);
    expect(await readFile(added[0]!)).toEqual(Buffer.concat([Buffer.from('image/png\n'), marker]));
  });
});

describe('who may see a rendering', () => {
  test('row-level security decides, as for downloads', async () => {
    const mine = (user.client as SupabaseClient).storage.from('photos');
    await server.adminClient().storage.from('photos').upload(`${user.id}/me.jpg`, photo, {
      contentType: 'image/jpeg',
    });
    const refused = await mine.download(`${user.id}/me.jpg`, { transform: { width: 10 } });
    expect(refused.data).toBeNull();
    expect(refused.error).toMatchObject({ statusCode: '404' });
    const anonymous = await server
      .client()
      .storage.from('photos')
      .download('cat.jpg', { transform: { width: 10 } });
    expect(anonymous.error).toMatchObject({ statusCode: '404' });

    await server.pool.query(
      `create policy own_photos on storage.objects for select to authenticated
         using (bucket_id = 'photos' and (storage.foldername(name))[1] = (select auth.uid())::text)`,
    );
    const allowed = await mine.download(`${user.id}/me.jpg`, { transform: { width: 10 } });
    expect(allowed.error).toBeNull();
    expect((await sharp(Buffer.from(await allowed.data!.arrayBuffer())).metadata()).width).toBe(10);
    // Only their own folder.
    expect((await mine.download('cat.jpg', { transform: { width: 10 } })).error).toMatchObject({
      statusCode: '404',
    });
  });

  test('a signed URL made with a transform serves that rendering to anyone, and only that object', async () => {
    const photos = server.adminClient().storage.from('photos');
    const signed = await photos.createSignedUrl('cat.jpg', 60, {
      transform: { width: 100, height: 100, quality: 60 },
    });
    expect(signed.error).toBeNull();
    expect(signed.data!.signedUrl).toContain('/storage/v1/render/image/sign/photos/cat.jpg?token=');
    const got = await decoded(await fetch(signed.data!.signedUrl));
    expect([got.format, got.width, got.height]).toEqual(['jpeg', 100, 100]);
    expect(got.response.headers.get('x-transformations')).toBe(
      'height:100,width:100,resizing_type:fill,quality:60',
    );
    expect(got.response.headers.get('expires')).toBeTruthy();
    // Query options cannot widen what was signed.
    const widened = await decoded(await fetch(`${signed.data!.signedUrl}&width=700&height=500`));
    expect([widened.width, widened.height]).toEqual([100, 100]);

    const token = new URL(signed.data!.signedUrl).searchParams.get('token')!;
    const elsewhere = await fetch(`${server.url}/storage/v1/render/image/sign/open/cat.jpg?token=${token}`);
    expect(elsewhere.status).toBe(400);
    expect(await elsewhere.json()).toMatchObject({ code: 'InvalidSignature' });

    // Without a transform the URL is the object's, as before.
    const plain = await photos.createSignedUrl('cat.jpg', 60);
    expect(plain.data!.signedUrl).toContain('/storage/v1/object/sign/photos/cat.jpg?token=');
    // A bad transform is refused when signing.
    const bad = await photos.createSignedUrl('cat.jpg', 60, { transform: { quality: 5 } });
    expect(bad.error).toMatchObject({ statusCode: '400', message: 'body/transform/quality must be >= 20' });
  });
});

describe('bad options and hostile files', () => {
  test('bad options are refused with what is wrong, before anything is rendered', async () => {
    const before = (await cachedFiles()).length;
    for (const [query, message] of [
      ['width=-1', 'querystring/width must be >= 0'],
      ['width=abc', 'querystring/width must be integer'],
      ['quality=10', 'querystring/quality must be >= 20'],
      ['quality=101', 'querystring/quality must be <= 100'],
      [
        'resize=stretch',
        'querystring/resize must be equal to one of the allowed values: cover, contain, fill',
      ],
      ['format=gif', 'querystring/format must be equal to one of the allowed values: origin, avif, webp'],
    ] as const) {
      const answer = await render(`authenticated/photos/cat.jpg?${query}`);
      expect(answer.status, query).toBe(400);
      expect(await answer.json()).toMatchObject({ statusCode: '400', code: 'InvalidRequest', message });
    }
    expect(await cachedFiles()).toHaveLength(before);
  });

  test('a decompression bomb, an oversized file and a file that is no image are refused cleanly', async () => {
    const photos = server.adminClient().storage.from('photos');
    const bomb = pngBomb(100_000, 100_000);
    expect(bomb.length).toBeLessThan(10_000);
    await photos.upload('bad/bomb.png', bomb, { contentType: 'image/png' });
    const rss = process.memoryUsage().rss;
    const bombAnswer = await render('authenticated/photos/bad/bomb.png?width=10');
    expect(bombAnswer.status).toBe(400);
    expect(await bombAnswer.json()).toEqual({
      statusCode: '400',
      code: 'InvalidRequest',
      error: 'InvalidRequest',
      message: 'The source image resolution is too large to process',
    });
    // Nothing near the 10 GB the header claims was ever allocated.
    expect(process.memoryUsage().rss - rss).toBeLessThan(200 * 1024 * 1024);

    // Over STORAGE_IMAGE_MAX_SOURCE_BYTES (3 MB here): refused before it is read.
    const big = Buffer.concat([await jpeg(200, 200), Buffer.alloc(3_100_000)]);
    await photos.upload('bad/big.jpg', big, { contentType: 'image/jpeg' });
    const bigAnswer = await render('authenticated/photos/bad/big.jpg?width=10');
    expect(bigAnswer.status).toBe(400);
    expect(await bigAnswer.json()).toMatchObject({
      message: 'The source image file is too large to process',
    });

    for (const [name, bytes] of [
      ['bad/notes.txt', Buffer.from('not an image')],
      ['bad/cut.jpg', photo.subarray(0, 200)],
      ['bad/vector.svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"/>')],
    ] as const) {
      await photos.upload(name, bytes, { contentType: 'image/jpeg' });
      const answer = await render(`authenticated/photos/${name}?width=10`);
      expect(answer.status, name).toBe(400);
      expect(answer.headers.get('content-type')).toContain('application/json');
      expect(await answer.json()).toMatchObject({
        statusCode: '400',
        message: 'The source image is invalid or unsupported for rendering',
      });
    }
    // The server still renders.
    expect((await decoded(await render('authenticated/photos/cat.jpg?width=33'))).width).toBe(33);
  });
});

test('switched off (STORAGE_IMAGE_TRANSFORMATION=off), /render/image is an unknown route and signing ignores transform', async () => {
  const off = await startStorageServer({ STORAGE_IMAGE_TRANSFORMATION: 'off' });
  try {
    const storage = off.adminClient().storage;
    await storage.createBucket('photos');
    await storage.from('photos').upload('cat.jpg', photo, { contentType: 'image/jpeg' });
    const answer = await storageFetch(off, 'GET', '/render/image/authenticated/photos/cat.jpg?width=10');
    expect(answer.status).toBe(404);
    expect(await answer.json()).toMatchObject({ statusCode: '404', message: 'Route not found' });
    const signed = await storage.from('photos').createSignedUrl('cat.jpg', 60, { transform: { width: 10 } });
    expect(signed.data!.signedUrl).toContain('/storage/v1/object/sign/photos/cat.jpg?token=');
    const original = Buffer.from(await (await fetch(signed.data!.signedUrl)).arrayBuffer());
    expect(original).toEqual(photo);
  } finally {
    await off.close();
  }
});
