// A local S3-compatible server (s3rver, files in a temporary folder) with one bucket, and the
// storage settings that point the S3 backend at it: the S3 backend is tested against a real
// server speaking S3's protocol, never against a mock. One thing is mended: s3rver writes an
// upload straight into the object's file, so two uploads to one key at once interleave, where S3
// keeps exactly one of them whole. Here each upload is written aside and moved into place.
import { randomUUID, createHash } from 'node:crypto';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import S3rver from 's3rver';
import type { StorageBackendConfig } from '../../src/server/config.js';

export interface TestS3Server {
  endpoint: string;
  bucket: string;
  settings: Extract<StorageBackendConfig, { kind: 's3' }>;
  stop(): Promise<void>;
}

export async function startS3Server(bucket = 'tenantry-test'): Promise<TestS3Server> {
  const directory = mkdtempSync(path.join(tmpdir(), 'tenantry-s3-'));
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  storeUploadsWhole(server, mkdtempSync(path.join(tmpdir(), 'tenantry-s3-incoming-')));
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    settings: {
      kind: 's3',
      endpoint,
      bucket,
      region: 'us-east-1',
      // s3rver's fixed development credentials.
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      forcePathStyle: true,
    },
    async stop() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
      rmSync(incomingOf(server), { recursive: true, force: true });
    },
  };
}

/** The part of s3rver's file store this module replaces and calls (its `store`, untyped). */
interface S3rverStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: unknown, md5: string): Promise<void>;
  putObject(object: S3rverObject): Promise<{ size: number; md5: string }>;
}
interface S3rverObject {
  bucket: string;
  key: string;
  metadata: unknown;
  content: Buffer | Readable;
}

const incoming = new WeakMap<object, string>();
function incomingOf(server: S3rver): string {
  return incoming.get(server) ?? '';
}

/**
 * Uploads land whole, as on S3: the body is written to a file of its own (in `folder`, on the same
 * file system) and renamed over the object's file, and the object's file and metadata are
 * replaced one upload at a time per key, so the last upload to finish wins with its own ETag.
 */
function storeUploadsWhole(server: S3rver, folder: string): void {
  incoming.set(server, folder);
  const store = (server as unknown as { store: S3rverStore }).store;
  const commits = new Map<string, Promise<unknown>>();
  store.putObject = async (object) => {
    const md5 = createHash('md5');
    let size = 0;
    const counting = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        md5.update(chunk);
        size += chunk.length;
        done(null, chunk);
      },
    });
    const aside = path.join(folder, randomUUID());
    const body = Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content;
    await pipeline(body, counting, createWriteStream(aside));
    const digest = md5.digest('hex');
    const key = `${object.bucket}/${object.key}`;
    const commit = (commits.get(key) ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        const objectPath = store.getResourcePath(object.bucket, object.key, 'object');
        await mkdir(path.dirname(objectPath), { recursive: true });
        await rename(aside, objectPath);
        await store.putMetadata(object.bucket, object.key, object.metadata, digest);
      });
    commits.set(key, commit);
    try {
      await commit;
    } finally {
      if (commits.get(key) === commit) commits.delete(key);
    }
    return { size, md5: digest };
  };
}
