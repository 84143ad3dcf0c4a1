// Test support for storage suites: a server whose files live in a fresh place of their own (a
// temporary folder for the local backend, or a local S3-compatible server with `backend: 's3'`),
// a count of the objects the backend holds, and a raw request helper.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { createLogger } from '../../src/server/logger.js';
import { createStorageBackend } from '../../src/server/storage/backends/index.js';
import { createDeletionQueue } from '../../src/server/storage/deletions.js';
import { startS3Server } from '../support/s3-server.js';
import { startTestServer, type TestServer } from '../support/server.js';

export interface StorageTestServer extends TestServer {
  /** deletes now the bytes whose rows are gone (the server does it soon after, on its own) */
  drainDeletions(): Promise<number>;
  /** how many objects the backend holds (unfinished uploads' temporary files excluded) */
  storedCount(): Promise<number>;
}

async function countFiles(dir: string): Promise<number> {
  let count = 0;
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'tmp' && entry.name !== '.tmp') count += await countFiles(full);
    } else if (!entry.name.endsWith('.tmp') && !entry.name.endsWith('.partial')) count++;
  }
  return count;
}

export async function startStorageServer(
  env: Record<string, string> = {},
  options: { backend?: 'local' | 's3' } = {},
): Promise<StorageTestServer> {
  const backendKind = options.backend ?? (process.env.STORAGE_TEST_BACKEND === 's3' ? 's3' : 'local');
  let storedCount: () => Promise<number>;
  let cleanUp: () => Promise<void>;
  let backendEnv: Record<string, string>;
  if (backendKind === 's3') {
    const s3 = await startS3Server();
    backendEnv = {
      STORAGE_BACKEND: 's3',
      STORAGE_S3_ENDPOINT: s3.endpoint,
      STORAGE_S3_BUCKET: s3.bucket,
      STORAGE_S3_REGION: s3.settings.region,
      STORAGE_S3_ACCESS_KEY_ID: s3.settings.credentials!.accessKeyId,
      STORAGE_S3_SECRET_ACCESS_KEY: s3.settings.credentials!.secretAccessKey,
      STORAGE_S3_FORCE_PATH_STYLE: 'true',
    };
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: s3.settings.region,
      credentials: s3.settings.credentials,
      forcePathStyle: true,
    });
    storedCount = async () => {
      const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket }));
      return listed.KeyCount ?? 0;
    };
    cleanUp = async () => {
      client.destroy();
      await s3.stop();
    };
  } else {
    const dir = await mkdtemp(path.join(tmpdir(), 'tenantry-storage-'));
    backendEnv = { STORAGE_LOCAL_DIR: dir };
    storedCount = () => countFiles(dir);
    cleanUp = () => rm(dir, { recursive: true, force: true });
  }
  const server = await startTestServer({ ...backendEnv, ...env });
  const backend = await createStorageBackend(server.config);
  const queue = createDeletionQueue(server.pool, backend, createLogger('silent'), 3_600_000);
  return {
    ...server,
    drainDeletions: () => queue.drain(),
    storedCount,
    close: async () => {
      queue.stop();
      await server.close();
      await cleanUp();
    },
  };
}

/** A raw request to /storage/v1 with the given bearer (the service key unless named; null = none). */
export async function storageFetch(
  server: TestServer,
  method: string,
  route: string,
  options: { bearer?: string | null; body?: BodyInit; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { apikey: server.config.projectApiKey, ...options.headers };
  if (options.bearer !== null)
    headers.authorization = `Bearer ${options.bearer ?? server.config.serviceRoleKey}`;
  return fetch(`${server.url}/storage/v1${route}`, { method, headers, body: options.body });
}
