// In charge of the shapes of storage requests, checked once at the edge: bucket ids and options
// (file_size_limit as bytes or "1mb"-style text, allowed_mime_types with wildcards), object names,
// listing and signing bodies. Everything past here receives checked values.
import { storageErrors } from './errors.js';

/** Bucket ids as storage allows them: 1-100 characters, S3-safe, no slash. */
const BUCKET_NAME = /^(\w|!|-|\.|\*|'|\(|\)| |&|\$|@|=|;|:|\+|,|\?)*$/;

export function checkBucketId(id: unknown): string {
  if (
    typeof id !== 'string' ||
    id.length < 1 ||
    id.length > 100 ||
    !BUCKET_NAME.test(id) ||
    id.trim() !== id
  ) {
    throw storageErrors.invalidBucketName(String(id));
  }
  return id;
}

/**
 * Object names as storage allows them (alphanumerics, _ - . ' , ! * & $ @ = ; : + ? / ( ) and
 * spaces), at most 1024 characters; no empty, '.' or '..' segment, so a name is one path.
 */
const OBJECT_NAME = /^(\w|\/|!|-|\.|\*|'|\(|\)| |&|\$|@|=|;|:|\+|,|\?)*$/;

export function checkObjectName(name: unknown): string {
  if (typeof name !== 'string' || name.length < 1 || name.length > 1024 || !OBJECT_NAME.test(name)) {
    throw storageErrors.invalidKey(String(name));
  }
  if (name.split('/').some((s) => s === '' || s === '.' || s === '..')) throw storageErrors.invalidKey(name);
  return name;
}

// Decimal units, as storage reads them: "20mb" is 20,000,000 bytes.
const SIZE_UNITS: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12 };

/** A size as bytes: a number, or text such as "20GB", "1mb", "30KB" or "3B". */
export function parseSize(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw invalidSize();
    return value === 0 ? null : value;
  }
  if (typeof value !== 'string') throw invalidSize();
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb)?\s*$/i.exec(value);
  if (!match) throw invalidSize();
  const bytes = Math.floor(Number(match[1]) * SIZE_UNITS[(match[2] ?? 'b').toLowerCase()]!);
  if (!Number.isSafeInteger(bytes)) throw invalidSize();
  return bytes === 0 ? null : bytes;
}

function invalidSize() {
  return storageErrors.invalidRequest('Invalid file size format, hint: use 20GB / 20MB / 30KB / 3B');
}

const MIME = /^[\w.+-]+\/([\w.+-]+|\*)$/;

export function parseMimeTypes(value: unknown): string[] | null {
  if (value === null || value === undefined) return null;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw storageErrors.invalidRequest('allowed_mime_types must be an array of strings');
  }
  const types = (value as string[]).map((t) => t.trim()).filter((t) => t !== '');
  for (const t of types) if (!MIME.test(t)) throw storageErrors.invalidRequest(`Invalid mime type ${t}`);
  return types.length ? types : null;
}

/** The type without parameters, lower-cased: "text/plain;charset=UTF-8" -> "text/plain". */
export function bareMimeType(type: string): string {
  return type.split(';')[0]!.trim().toLowerCase();
}

/** True when the bucket allows the type (exact or type/* wildcard); no list allows all. */
export function mimeAllowed(allowed: string[] | null, type: string): boolean {
  if (!allowed || allowed.length === 0) return true;
  const bare = bareMimeType(type);
  const [major] = bare.split('/');
  return allowed.some((a) => {
    const pattern = a.toLowerCase();
    return (
      pattern === bare || pattern === '*/*' || (pattern.endsWith('/*') && pattern.slice(0, -2) === major)
    );
  });
}

export interface BucketOptions {
  public?: boolean;
  fileSizeLimit?: number | null;
  allowedMimeTypes?: string[] | null;
}

/** The options of a create or update body; `maxUpload` caps a bucket's limit. */
export function bucketOptions(body: Record<string, unknown>, maxUpload: number): BucketOptions {
  const options: BucketOptions = {};
  if (body.public !== undefined && body.public !== null) {
    if (typeof body.public !== 'boolean') throw storageErrors.invalidRequest('public must be a boolean');
    options.public = body.public;
  }
  if ('file_size_limit' in body) {
    const limit = parseSize(body.file_size_limit);
    if (limit !== null && limit > maxUpload) {
      throw storageErrors.invalidRequest(
        `file_size_limit is above the server's upload limit of ${maxUpload} bytes (STORAGE_MAX_UPLOAD_BYTES)`,
      );
    }
    options.fileSizeLimit = limit;
  }
  if ('allowed_mime_types' in body) options.allowedMimeTypes = parseMimeTypes(body.allowed_mime_types);
  return options;
}

/** A JSON object body, or a 400 naming what was wrong. */
export function jsonObject(bytes: Uint8Array): Record<string, unknown> {
  const text = Buffer.from(bytes).toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw storageErrors.invalidRequest('Body is not valid JSON');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw storageErrors.invalidRequest('Body must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/** A whole number within bounds, or the default when absent. */
export function intParam(value: unknown, name: string, fallback: number, min: number, max: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min) {
    throw storageErrors.invalidRequest(`${name} must be an integer of at least ${min}`);
  }
  return Math.min(n, max);
}

export function stringParam(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw storageErrors.invalidRequest(`${name} must be a string`);
  return value;
}

/** cache-control as stored: "3600" from storage-js becomes "max-age=3600". */
export function cacheControlOf(value: string | null | undefined): string {
  if (!value) return 'no-cache';
  return /^\d+$/.test(value.trim()) ? `max-age=${value.trim()}` : value.trim().slice(0, 200);
}

/** user metadata from x-metadata (base64 JSON) or a multipart field (JSON). */
export function userMetadataOf(
  value: string | null | undefined,
  base64: boolean,
): Record<string, unknown> | null {
  if (!value) return null;
  try {
    const parsed: unknown = JSON.parse(base64 ? Buffer.from(value, 'base64').toString('utf8') : value);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
      return parsed as Record<string, unknown>;
  } catch {
    // answered below
  }
  throw storageErrors.invalidRequest('metadata must be a JSON object');
}
