// In charge of signed URLs: download tokens (scope download, bound to one bucket/path, expiring)
// minted only for objects the caller may read, and upload tokens (scope upload, the owner and
// upsert choice baked in) minted only when the caller's policies allow the write, checked with a
// rolled-back write at signing time as Supabase does. Tokens are HS256 JWTs under a key derived
// from JWT_SECRET for this purpose alone, so no access token can pass as a signed URL or back.
import { createHmac } from 'node:crypto';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import type { Claims } from '../db/transactions.js';
import { asCaller, type StorageDeps } from './context.js';
import { storageErrors } from './errors.js';
import { checkWrite, findObject } from './objects.js';
import { checkObjectName, intParam } from './shapes.js';

export function urlSigningKeyFrom(jwtSecret: string): Uint8Array {
  return createHmac('sha256', jwtSecret).update('tenantry storage signed URLs v1').digest();
}

/** A path as it appears in a URL: each segment encoded, the slashes kept. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

type Scope = 'download' | 'upload';

interface SignedClaims {
  url: string;
  scope: Scope;
  owner?: string | null;
  upsert?: boolean;
  /** a download URL's image transformations, as the storage server spells them (render.ts) */
  transformations?: string;
  exp?: number;
}

async function sign(deps: StorageDeps, claims: SignedClaims, seconds: number): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt(now)
    .setExpirationTime(now + seconds)
    .sign(deps.urlSigningKey);
}

/**
 * A download path (under /storage/v1) whose token is the same for a whole window of time: issued
 * at the window's start and good for two windows, so pages that show the same picture on every
 * visit hand the browser the same address and it stays cached. Only for an object the caller was
 * already found to be allowed to read.
 */
export async function windowedDownloadPath(
  key: Uint8Array,
  bucketId: string,
  name: string,
  windowSeconds: number,
  now = Date.now(),
): Promise<string> {
  const start = Math.floor(now / 1000 / windowSeconds) * windowSeconds;
  const token = await new SignJWT({ url: `${bucketId}/${name}`, scope: 'download' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt(start)
    .setExpirationTime(start + 2 * windowSeconds)
    .sign(key);
  return `/object/sign/${encodePath(`${bucketId}/${name}`)}?token=${token}`;
}

/** The token's claims when it is ours, unexpired, of this scope and for exactly this bucket/path. */
export async function verifySignedToken(
  deps: StorageDeps,
  token: string | null,
  scope: Scope,
  bucketId: string,
  name: string,
): Promise<SignedClaims> {
  if (!token) throw storageErrors.invalidSignature('Missing token');
  let payload: Record<string, unknown>;
  try {
    ({ payload } = await jwtVerify(token, deps.urlSigningKey, { algorithms: ['HS256'] }));
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw storageErrors.expiredToken();
    throw storageErrors.invalidSignature();
  }
  if (payload.scope !== scope) throw storageErrors.invalidSignature(`Token is not scoped for ${scope}`);
  if (payload.url !== `${bucketId}/${name}`) throw storageErrors.invalidSignature();
  return payload as unknown as SignedClaims;
}

function expiresInOf(deps: StorageDeps, value: unknown): number {
  const seconds = intParam(value, 'expiresIn', NaN, 1, Number.MAX_SAFE_INTEGER);
  if (!Number.isFinite(seconds)) throw storageErrors.invalidRequest('expiresIn is required');
  if (seconds > deps.limits.signedUrlMaxSeconds) {
    throw storageErrors.invalidRequest(
      `expiresIn may be at most ${deps.limits.signedUrlMaxSeconds} seconds (STORAGE_SIGNED_URL_MAX_SECONDS)`,
    );
  }
  return seconds;
}

/**
 * POST /object/sign/{bucket}/{path}: a download URL for an object the caller may read. With
 * image transformations served, body.transform is checked and baked into the token, and the URL
 * is the rendering's (/render/image/sign/...); without them it is ignored, as storage ignores it.
 */
export async function signDownload(
  deps: StorageDeps,
  claims: Claims,
  bucketId: string,
  name: string,
  body: Record<string, unknown>,
  transformationsOf?: (transform: unknown) => string | null,
): Promise<{ signedURL: string }> {
  const seconds = expiresInOf(deps, body.expiresIn);
  const transformations = transformationsOf ? transformationsOf(body.transform) : null;
  await findObject(deps, claims, bucketId, name);
  const signed: SignedClaims = { url: `${bucketId}/${name}`, scope: 'download' };
  if (transformations) signed.transformations = transformations;
  const token = await sign(deps, signed, seconds);
  const route = transformations ? 'render/image' : 'object';
  return { signedURL: `/${route}/sign/${encodePath(`${bucketId}/${name}`)}?token=${token}` };
}

/** POST /object/sign/{bucket}: download URLs for several paths; those the caller cannot read get an error. */
export async function signDownloads(
  deps: StorageDeps,
  claims: Claims,
  bucketId: string,
  body: Record<string, unknown>,
) {
  const seconds = expiresInOf(deps, body.expiresIn);
  const paths = body.paths;
  if (!Array.isArray(paths) || paths.length === 0 || paths.some((p) => typeof p !== 'string')) {
    throw storageErrors.invalidRequest('paths must be a non-empty array of strings');
  }
  if (paths.length > deps.limits.batchMax) {
    throw storageErrors.invalidRequest(`At most ${deps.limits.batchMax} paths (STORAGE_BATCH_MAX)`);
  }
  const visible = await asCaller(deps, claims, async (tx) => {
    const { rows } = await tx.query<{ name: string }>(
      'select name from storage.objects where bucket_id = $1 and name = any ($2::text[])',
      [bucketId, paths],
    );
    return new Set(rows.map((r) => r.name));
  });
  return Promise.all(
    (paths as string[]).map(async (path) => {
      if (!visible.has(path)) {
        return {
          error: 'Either the object does not exist or you do not have access to it',
          path,
          signedURL: null,
        };
      }
      const token = await sign(deps, { url: `${bucketId}/${path}`, scope: 'download' }, seconds);
      return {
        error: null,
        path,
        signedURL: `/object/sign/${encodePath(`${bucketId}/${path}`)}?token=${token}`,
      };
    }),
  );
}

/** POST /object/upload/sign/{bucket}/{path}: an upload URL, when the caller's policies allow the write now. */
export async function signUpload(
  deps: StorageDeps,
  claims: Claims,
  bucketId: string,
  rawName: string,
  upsert: boolean,
): Promise<{ url: string; token: string }> {
  const name = checkObjectName(rawName);
  const owner = typeof claims.sub === 'string' ? claims.sub : null;
  await checkWrite(deps, { claims, ownerId: owner }, bucketId, name, upsert ? 'upsert' : 'create');
  const token = await sign(
    deps,
    { url: `${bucketId}/${name}`, scope: 'upload', owner, upsert },
    deps.limits.signedUploadSeconds,
  );
  return { url: `/object/upload/sign/${encodePath(`${bucketId}/${name}`)}?token=${token}`, token };
}
