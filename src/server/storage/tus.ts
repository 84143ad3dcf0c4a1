// In charge of the TUS 1.0.0 wire details resumable uploads are spoken in: the Upload-Metadata
// header, upload ids and URLs as Supabase Storage makes them, the protocol's own refusals (status
// and text body as tus servers answer them) and the headers every answer carries.
import { StorageError } from './errors.js';

export const TUS_VERSION = '1.0.0';
/** Creation (with data in the same request), termination and expiry; no deferred length or concatenation. */
export const TUS_EXTENSIONS = 'creation,creation-with-upload,termination,expiration';
export const OFFSET_OCTET_STREAM = 'application/offset+octet-stream';

/** The headers tus clients send and read, and those Supabase Storage allows on top. */
const TUS_HEADERS = [
  'Authorization',
  'Content-Type',
  'Location',
  'Tus-Extension',
  'Tus-Max-Size',
  'Tus-Resumable',
  'Tus-Version',
  'Upload-Concat',
  'Upload-Defer-Length',
  'Upload-Length',
  'Upload-Metadata',
  'Upload-Offset',
  'X-HTTP-Method-Override',
  'X-Requested-With',
  'X-Forwarded-Host',
  'X-Forwarded-Proto',
  'Forwarded',
];
export const TUS_ALLOW_HEADERS = [
  ...TUS_HEADERS,
  'X-Upsert',
  'Upload-Expires',
  'ApiKey',
  'x-signature',
  'x-client-info',
].join(', ');
export const TUS_EXPOSE_HEADERS = [...TUS_HEADERS, 'Upload-Expires', 'Tus-Complete', 'X-Request-Id'].join(
  ', ',
);
export const TUS_METHODS = 'POST, HEAD, PATCH, OPTIONS, DELETE';

/** A refusal of the protocol itself, answered as tus servers answer it (status and text). */
function tusError(status: number, code: string, text: string): StorageError {
  return new StorageError(status, code, 'Resumable upload', text, status);
}

export const tusErrors = {
  resumableRequired: () => tusError(412, 'TusResumableRequired', 'Tus-Resumable Required\n'),
  missingOffset: () => tusError(403, 'MissingOffset', 'Upload-Offset header required\n'),
  missingContentType: () => tusError(403, 'InvalidContentType', 'Content-Type header required\n'),
  invalidHeader: (name: string) => tusError(400, 'InvalidHeader', `Invalid ${name}\n`),
  notFound: () => tusError(404, 'NoSuchUpload', 'The file for this url was not found\n'),
  expired: () => tusError(410, 'UploadExpired', 'The file for this url no longer exists\n'),
  offsetConflict: () => tusError(409, 'InvalidOffset', 'Upload-Offset conflict\n'),
  sizeExceeded: () => tusError(413, 'SizeExceeded', "upload's size exceeded\n"),
  maxSizeExceeded: () => tusError(413, 'EntityTooLarge', 'Maximum size exceeded\n'),
  invalidLength: () =>
    tusError(400, 'InvalidLength', 'Upload-Length or Upload-Defer-Length header required\n'),
  invalidMetadata: () =>
    tusError(
      400,
      'InvalidMetadata',
      'Upload-Metadata is invalid. It MUST consist of one or more comma-separated key-value pairs. The key and value MUST be separated by a space. The key MUST NOT contain spaces and commas and MUST NOT be empty. The key SHOULD be ASCII encoded and the value MUST be Base64 encoded. All keys MUST be unique',
    ),
  metadataRequired: () =>
    tusError(400, 'MetadataRequired', 'Upload-Metadata with bucketName and objectName is required'),
  deferLength: () =>
    tusError(501, 'NotImplemented', 'creation-defer-length extension is not (yet) supported.\n'),
  concatenation: () =>
    tusError(
      501,
      'NotImplemented',
      'Concatenation extension is not (yet) supported. Disable parallel uploads in the tus client.\n',
    ),
  aborted: () => tusError(400, 'RequestAborted', 'The request ended before its body did\n'),
  notOwner: () => tusError(403, 'AccessDenied', 'This upload was created by another caller'),
};

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Upload-Metadata: comma-separated `key base64value` (or a lone key); null when absent. */
export function parseUploadMetadata(header: string | null): Map<string, string> | null {
  if (header === null) return null;
  const entries = new Map<string, string>();
  for (const pair of header.split(',')) {
    const parts = pair.trim().split(' ');
    const [key, value] = parts;
    if (parts.length > 2 || !key || entries.has(key)) throw tusErrors.invalidMetadata();
    if (value !== undefined && (value.length % 4 !== 0 || !BASE64.test(value)))
      throw tusErrors.invalidMetadata();
    entries.set(key, value === undefined ? '' : Buffer.from(value, 'base64').toString('utf8'));
  }
  return entries;
}

/** A header that must hold a non-negative whole number (Upload-Length, Upload-Offset). */
export function nonNegativeInteger(value: string, name: string): number {
  if (!/^\d{1,16}$/.test(value) || !Number.isSafeInteger(Number(value))) throw tusErrors.invalidHeader(name);
  return Number(value);
}

/** An upload's id as Supabase makes it: base64url of `bucket/object name/version`. */
export function uploadIdOf(bucketId: string, name: string, version: string): string {
  return Buffer.from(`${bucketId}/${name}/${version}`, 'utf8').toString('base64url');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The bucket, name and version an upload id names; null when it names none. */
export function parseUploadId(id: string): { bucketId: string; name: string; version: string } | null {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) return null;
  const parts = Buffer.from(id, 'base64url').toString('utf8').split('/');
  if (parts.length < 3) return null;
  const bucketId = parts[0]!;
  const version = parts[parts.length - 1]!;
  const name = parts.slice(1, -1).join('/');
  if (!bucketId || !name || !UUID.test(version)) return null;
  return { bucketId, name, version };
}
