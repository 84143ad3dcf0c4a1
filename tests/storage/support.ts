// Test support for storage suites: a server whose files live in a fresh temporary folder, and
// helpers to read what storage answered.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, type TestServer } from '../support/server.js';

export interface StorageTestServer extends TestServer {
  /** where the local backend keeps bytes */
  storageDir: string;
}

export async function startStorageServer(env: Record<string, string> = {}): Promise<StorageTestServer> {
  const storageDir = await mkdtemp(path.join(tmpdir(), 'tenantry-storage-'));
  const server = await startTestServer({ STORAGE_LOCAL_DIR: storageDir, ...env });
  return {
    ...server,
    storageDir,
    close: async () => {
      await server.close();
      await rm(storageDir, { recursive: true, force: true });
    },
  };
}

/** A raw request to /storage/v1 with the given bearer (the project key as apikey). */
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
