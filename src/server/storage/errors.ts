// In charge of storage's errors and their one rendering: Supabase Storage's body (statusCode as a
// string, code, error, message) and its HTTP statuses (400 for every error a client caused, unless
// the error names its own), so storage-js reads them as it reads Supabase's.
export class StorageError extends Error {
  override name = 'StorageError';
  constructor(
    /** the status the body names (statusCode, as a string on the wire) */
    readonly statusCode: number,
    /** Supabase Storage's error code (NoSuchBucket, AccessDenied, ...) */
    readonly code: string,
    /** the legacy short error ("Bucket not found", "Unauthorized", ...) */
    readonly error: string,
    message: string,
    /** the HTTP status, when it is not storage's usual 400 */
    readonly httpStatus = 400,
  ) {
    super(message);
  }
}

export function isStorageError(error: unknown): error is StorageError {
  return error instanceof StorageError;
}

export const storageErrors = {
  noSuchBucket: () => new StorageError(404, 'NoSuchBucket', 'Bucket not found', 'Bucket not found'),
  noSuchKey: () => new StorageError(404, 'NoSuchKey', 'not_found', 'Object not found'),
  bucketExists: () =>
    new StorageError(409, 'BucketAlreadyExists', 'Duplicate', 'The resource already exists'),
  keyExists: () => new StorageError(409, 'KeyAlreadyExists', 'Duplicate', 'The resource already exists'),
  bucketNotEmpty: () =>
    new StorageError(409, 'ResourceNotEmpty', 'Conflict', 'The bucket you tried to delete is not empty'),
  tooLarge: () =>
    new StorageError(
      413,
      'EntityTooLarge',
      'Payload too large',
      'The object exceeded the maximum allowed size',
    ),
  planBytes: (message: string) => new StorageError(413, 'QuotaExceeded', 'Payload too large', message, 413),
  invalidMime: (type: string) =>
    new StorageError(415, 'InvalidMimeType', 'invalid_mime_type', `mime type ${type} is not supported`),
  accessDenied: (message = 'new row violates row-level security policy') =>
    new StorageError(403, 'AccessDenied', 'Unauthorized', message),
  // As storage answers a token it cannot verify: AccessDenied, HTTP 400, the verifier's reason.
  invalidJwt: (message: string) => new StorageError(403, 'AccessDenied', 'Unauthorized', message),
  invalidBucketName: (name: string) =>
    new StorageError(400, 'InvalidBucketName', 'Invalid Input', `Bucket name invalid: ${name}`),
  invalidKey: (name: string) => new StorageError(400, 'InvalidKey', 'Invalid Input', `Invalid key: ${name}`),
  invalidRequest: (message: string) => new StorageError(400, 'InvalidRequest', 'Invalid Input', message),
  invalidSignature: (message = 'Invalid signature') =>
    new StorageError(400, 'InvalidSignature', 'Invalid Signature', message),
  expiredToken: () =>
    new StorageError(400, 'ExpiredToken', 'Expired Token', 'The provided token has expired.'),
  invalidRange: () => new StorageError(400, 'InvalidRange', 'invalid_range', 'invalid range provided', 416),
  notFound: () => new StorageError(404, 'NotFound', 'Not Found', 'Route not found', 404),
  busy: (retryAfter: number, message: string) =>
    Object.assign(new StorageError(429, 'SlowDown', 'Too Many Requests', message, 429), {
      headers: { 'retry-after': String(retryAfter) },
    }),
  internal: () => new StorageError(500, 'InternalError', 'Internal', 'Internal Server Error', 500),
};

/** The wire body of an error. */
export function renderStorageError(e: StorageError): { status: number; body: string } {
  return {
    status: e.httpStatus,
    body: JSON.stringify({
      statusCode: String(e.statusCode),
      code: e.code,
      error: e.error,
      message: e.message,
    }),
  };
}

/**
 * A database error met while acting for the caller, as storage answers it: a policy's refusal is
 * AccessDenied (403 in the body), a duplicate name KeyAlreadyExists, a bucket still holding objects
 * ResourceNotEmpty, the plan's storage limit QuotaExceeded. Anything else is not the caller's doing.
 */
export function fromDatabaseError(error: unknown): StorageError | null {
  const e = error as { code?: unknown; message?: unknown; constraint?: unknown } | null;
  if (!e || typeof e !== 'object' || typeof e.code !== 'string') return null;
  switch (e.code) {
    case '42501':
      return storageErrors.accessDenied();
    case '23505':
      return e.constraint === 'buckets_pkey' || e.constraint === 'buckets_name_key'
        ? storageErrors.bucketExists()
        : storageErrors.keyExists();
    case '23503':
      return storageErrors.bucketNotEmpty();
    case 'PT413':
      return storageErrors.planBytes(typeof e.message === 'string' ? e.message : 'Storage limit reached');
    default:
      return null;
  }
}
