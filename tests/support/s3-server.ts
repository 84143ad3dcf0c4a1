// A local S3-compatible server (s3rver, files in a temporary folder) with one bucket, and the
// storage settings that point the S3 backend at it: the S3 backend is tested against a real
// server speaking S3's protocol, never against a mock.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
    },
  };
}
