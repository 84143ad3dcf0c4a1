// The image renderer's bounds on work: STORAGE_IMAGE_CONCURRENCY renderings run at once, at most
// STORAGE_IMAGE_QUEUE wait and the next is answered 429 at once, and requests for the same
// rendering share one read and one rendering. The backend is a stand-in whose reads are held open
// by the test, so "running" and "waiting" are certain rather than timed.
import { PassThrough } from 'node:stream';
import sharp from 'sharp';
import { expect, test } from 'vitest';
import type { StorageImagesConfig } from '../../src/server/config.js';
import { createLogger } from '../../src/server/logger.js';
import type { StorageBackend } from '../../src/server/storage/backends/types.js';
import { isStorageError } from '../../src/server/storage/errors.js';
import { createImageCache } from '../../src/server/storage/image-cache.js';
import { createImageRenderer } from '../../src/server/storage/image-renderer.js';

const config: StorageImagesConfig = {
  enabled: true,
  maxSourceBytes: 10_000_000,
  maxPixels: 10_000_000,
  maxDimension: 2000,
  concurrency: 1,
  queue: 1,
  cacheBytes: 0,
  cacheDir: '/nonexistent',
};

function heldBackend(image: Buffer) {
  const reads: { key: string; release: () => void }[] = [];
  const backend: StorageBackend = {
    get: async (key) => {
      const stream = new PassThrough();
      reads.push({ key, release: () => stream.end(image) });
      return {
        stream,
        object: { size: image.length, etag: 'e', lastModified: new Date() },
      };
    },
    put: () => Promise.reject(new Error('not used')),
    head: () => Promise.resolve(null),
    copy: () => Promise.reject(new Error('not used')),
    delete: () => Promise.resolve(),
  };
  return { backend, reads };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
};

test('one rendering runs, one waits, the next is refused with 429; the same rendering is shared', async () => {
  const image = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#123' } })
    .png()
    .toBuffer();
  const { backend, reads } = heldBackend(image);
  const logger = createLogger('silent');
  const renderer = createImageRenderer(config, backend, createImageCache('/nonexistent', 0, logger), logger);
  const source = { version: '00000000-0000-4000-8000-000000000001', size: image.length };

  const first = renderer.render(source, { width: 20 }, false);
  const sameAsFirst = renderer.render(source, { width: 20 }, false);
  await until(() => reads.length === 1);
  const second = renderer.render(source, { width: 10 }, false);
  const third = renderer.render(source, { width: 5 }, false);
  const refused = await third.then(
    () => null,
    (error: unknown) => error,
  );
  expect(isStorageError(refused) && [refused.statusCode, refused.httpStatus, refused.code]).toEqual([
    429,
    429,
    'SlowDown',
  ]);
  // The waiting one has not started reading: only one turn.
  expect(reads).toHaveLength(1);
  reads[0]!.release();
  const [a, b] = await Promise.all([first, sameAsFirst]);
  expect(a).toBe(b);
  expect((await sharp(a.body).metadata()).width).toBe(20);
  await until(() => reads.length === 2);
  reads[1]!.release();
  expect((await sharp((await second).body).metadata()).width).toBe(10);
  // Two reads in all: the shared request read nothing of its own.
  expect(reads).toHaveLength(2);
});
