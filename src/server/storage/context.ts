// In charge of what every storage operation shares: its dependencies, running SQL as the caller
// (under row-level security, so exactly the storage policies decide) or as service_role (what
// Supabase Storage calls the superuser: public reads, signed URLs), and turning database refusals
// into storage errors.
import type { Pool } from '../db/pool.js';
import { withRls, type Claims, type Tx } from '../db/transactions.js';
import type { Logger } from '../logger.js';
import type { StorageBackend } from './backends/types.js';
import { fromDatabaseError } from './errors.js';

export interface StorageLimits {
  /** STORAGE_MAX_UPLOAD_BYTES: the largest object, over every bucket's own limit */
  maxUploadBytes: number;
  /** STORAGE_SIGNED_URL_MAX_SECONDS: the longest a signed download URL may live */
  signedUrlMaxSeconds: number;
  /** STORAGE_SIGNED_UPLOAD_SECONDS: how long a signed upload URL lives */
  signedUploadSeconds: number;
  /** STORAGE_BATCH_MAX: paths in one remove or batch sign */
  batchMax: number;
  /** STORAGE_UPLOAD_IDLE_TIMEOUT_MS: an accepted upload is cut when no byte arrives for this long */
  uploadIdleTimeoutMs: number;
  /** STORAGE_RESUMABLE_EXPIRY_SECONDS: how long an unfinished resumable upload is kept */
  resumableExpirySeconds: number;
}

export interface StorageDeps {
  pool: Pool;
  backend: StorageBackend;
  logger: Logger;
  limits: StorageLimits;
  /** the key signed URLs are signed with (derived from JWT_SECRET, never the secret itself) */
  urlSigningKey: Uint8Array;
  /** called after a transaction that may have queued bytes for deletion */
  bytesReleased: () => void;
  /** waits for the caller's fair turn at the database (set per request by routes.ts) */
  turn?: <T>(claims: Claims, fn: () => Promise<T>) => Promise<T>;
}

export const SERVICE_CLAIMS: Claims = { role: 'service_role' };

/** Runs fn as the caller (or as service_role for SERVICE_CLAIMS); database refusals become storage errors. */
export async function asCaller<T>(deps: StorageDeps, claims: Claims, fn: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    const run = () => withRls(deps.pool, claims, fn);
    return await (deps.turn ? deps.turn(claims, run) : run());
  } catch (error) {
    throw fromDatabaseError(error) ?? error;
  }
}

/** Thrown inside a transaction to roll back what it tried (a permission test). */
export class TestedOnly extends Error {
  constructor(readonly value: unknown) {
    super('rolled back on purpose');
  }
}

/** Runs fn as the caller and rolls it back: whether the policies allow it, changing nothing. */
export async function dryRun<T>(deps: StorageDeps, claims: Claims, fn: (tx: Tx) => Promise<T>): Promise<T> {
  try {
    await asCaller(deps, claims, async (tx) => {
      throw new TestedOnly(await fn(tx));
    });
  } catch (error) {
    if (error instanceof TestedOnly) return error.value as T;
    throw error;
  }
  throw new Error('unreachable');
}
