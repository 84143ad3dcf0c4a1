// In charge of choosing where stored files' bytes live (STORAGE_BACKEND) and readying it: the
// one place the rest of storage gets a backend from.
import type { Config } from '../../config.js';
import { LocalBackend } from './local.js';
import { S3Backend } from './s3.js';
import type { StorageBackend } from './types.js';

export { ObjectTooLarge, type StorageBackend, type StoredObject } from './types.js';
export { InvalidObjectKey, NoSuchObject } from './keys.js';
export { LocalBackend } from './local.js';
export { S3Backend } from './s3.js';
export { assembleParts } from './assemble.js';

/**
 * The backend STORAGE_BACKEND names. The local one first removes what uploads cut short by a
 * crash left (temporary files), then sweeps hourly.
 */
export async function createStorageBackend(config: Pick<Config, 'storageBackend'>): Promise<StorageBackend> {
  const settings = config.storageBackend;
  if (settings.kind === 'local') {
    const backend = new LocalBackend(settings.dir);
    await backend.startSweeping();
    return backend;
  }
  return new S3Backend(settings);
}
