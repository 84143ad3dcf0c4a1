// In charge of assembling the storage API from configuration: the backend (made once, on first
// use, since readying it is asynchronous), the deletion queue, the signing key, and the node:http
// listener the platform hands /storage/v1 to.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config.js';
import type { Pool } from '../db/pool.js';
import type { TokenSigner } from '../identity/access-tokens.js';
import type { ProjectKeys } from '../identity/caller.js';
import type { Logger } from '../logger.js';
import { createStorageBackend } from './backends/index.js';
import type { StorageBackend } from './backends/types.js';
import { createDeletionQueue, type DeletionQueue } from './deletions.js';
import { expireUploads } from './resumable-uploads.js';
import { createImageCache } from './image-cache.js';
import { createImageRenderer } from './image-renderer.js';
import { createStorageHandler } from './routes.js';
import { urlSigningKeyFrom } from './signed-urls.js';

/** How often the deletion queue is drained when no request kicked it. */
const DELETION_INTERVAL_MS = 30_000;
/** How often resumable uploads past their expiry are looked for. */
const EXPIRY_INTERVAL_MS = 60_000;

export interface Storage {
  listener: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  deletions: DeletionQueue;
  backend: StorageBackend;
}

/** A backend whose every call waits for the real one to be ready. */
function deferredBackend(ready: Promise<StorageBackend>): StorageBackend {
  return {
    put: async (key, body, options) => (await ready).put(key, body, options),
    get: async (key, range) => (await ready).get(key, range),
    head: async (key) => (await ready).head(key),
    copy: async (from, to) => (await ready).copy(from, to),
    delete: async (keys) => (await ready).delete(keys),
  };
}

/** Connections storage may hold at once: a quarter of the pool, at least two. */
export function storageConnections(poolMax: number): number {
  return Math.max(2, Math.floor(poolMax / 4));
}

export function createStorage(
  config: Pick<
    Config,
    | 'storageBackend'
    | 'storage'
    | 'storageImages'
    | 'jwtSecret'
    | 'trustProxy'
    | 'database'
    | 'dataApi'
    | 'appUrl'
    | 'appUrlGiven'
  >,
  pool: Pool,
  logger: Logger,
  keys: ProjectKeys,
  signer: TokenSigner,
): Storage {
  const ready = createStorageBackend(config);
  // Nothing is lost if it fails: every call answers the same failure, which is logged once here.
  ready.catch((error: unknown) => logger.error({ err: error }, 'storage backend could not be readied'));
  const backend = deferredBackend(ready);
  const deletions = createDeletionQueue(pool, backend, logger, DELETION_INTERVAL_MS);
  // Resumable uploads past their expiry go, and their parts' bytes with them (through the queue).
  const expiry = setInterval(() => {
    void expireUploads(pool)
      .then((n) => (n > 0 ? deletions.kick() : undefined))
      .catch((error: unknown) => logger.warn({ err: error }, 'storage: expiring resumable uploads failed'));
  }, EXPIRY_INTERVAL_MS);
  expiry.unref();
  const imageConfig = config.storageImages;
  const images = imageConfig.enabled
    ? {
        renderer: createImageRenderer(
          imageConfig,
          backend,
          createImageCache(imageConfig.cacheDir, imageConfig.cacheBytes, logger),
          logger,
        ),
        maxDimension: imageConfig.maxDimension,
      }
    : null;
  const listener = createStorageHandler(
    {
      pool,
      backend,
      logger,
      limits: config.storage,
      urlSigningKey: urlSigningKeyFrom(config.jwtSecret),
      bytesReleased: () => deletions.kick(),
      keys,
      signer,
      trustProxy: config.trustProxy,
      publicUrl: config.appUrlGiven ? config.appUrl : null,
      connections: storageConnections(config.database.poolMax),
      // The data API's shares per caller and per address (DATA_API_*_CONCURRENCY) apply here too.
      callerConcurrency: config.dataApi.callerConcurrency,
      addressConcurrency: config.dataApi.addressConcurrency,
      images,
    },
    logger,
  );
  return { listener, deletions, backend };
}
