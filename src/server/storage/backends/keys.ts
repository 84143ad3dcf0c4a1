// In charge of which object keys a backend accepts: the same rule for every backend, so a key that
// is refused on disk is refused on S3 too and nothing depends on which backend is configured.

/** S3's own limit on a key, in UTF-8 bytes. */
export const MAX_KEY_BYTES = 1024;

/** The key is not one any backend stores (see assertObjectKey); nothing was read or changed. */
export class InvalidObjectKey extends Error {
  override name = 'InvalidObjectKey';
}

/** copy() was asked for a source object that does not exist; nothing was written. */
export class NoSuchObject extends Error {
  override name = 'NoSuchObject';
}

/**
 * Throws InvalidObjectKey unless key is a relative path of non-empty segments none of which is
 * `.` or `..`, without NUL or other control characters or backslashes. The local backend never
 * builds a path from a key (it hashes it), so this is a second wall, not the only one.
 */
export function assertObjectKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidObjectKey('empty object key');
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) {
    throw new InvalidObjectKey(`object key longer than ${MAX_KEY_BYTES} bytes`);
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f\\]/.test(key)) {
    throw new InvalidObjectKey('object key contains a control character or a backslash');
  }
  if (key.startsWith('/')) throw new InvalidObjectKey('object key is absolute');
  for (const segment of key.split('/')) {
    if (segment === '' || segment === '.' || segment === '..') {
      throw new InvalidObjectKey('object key has an empty, "." or ".." segment');
    }
  }
  // A lone surrogate has no UTF-8 form: it would be stored under a different key than given.
  if (/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(key)) {
    throw new InvalidObjectKey('object key is not well-formed Unicode');
  }
}
