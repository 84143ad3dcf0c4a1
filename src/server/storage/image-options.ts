// In charge of image transformation options as storage reads and writes them: checking the query
// of /render/image/* and the `transform` of a signed URL (width, height, resize, format, quality,
// with the storage server's rules), their one canonical form (the cache key), the
// X-Transformations header storage answers with, and the string baked into a signed URL's token.
// Pure: no I/O.
import { storageErrors } from './errors.js';

export type Resize = 'cover' | 'contain' | 'fill';
export type Format = 'origin' | 'avif' | 'webp';

export interface TransformOptions {
  width?: number;
  height?: number;
  resize?: Resize;
  format?: Format;
  quality?: number;
}

const RESIZES: readonly string[] = ['cover', 'contain', 'fill'];
const FORMATS: readonly string[] = ['origin', 'avif', 'webp'];
/** Quality when none is asked for, as imgproxy's default. */
export const DEFAULT_QUALITY = 80;

/** Where a bad value came from, named as storage's validation errors name it. */
type Source = 'querystring' | 'body/transform';

function invalid(source: Source, field: string, rule: string) {
  return storageErrors.invalidRequest(`${source}/${field} ${rule}`);
}

function integerOf(value: unknown, source: Source, field: string, min: number, max?: number): number {
  const n = typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) throw invalid(source, field, 'must be integer');
  if (n < min) throw invalid(source, field, `must be >= ${min}`);
  if (max !== undefined && n > max) throw invalid(source, field, `must be <= ${max}`);
  return n;
}

function oneOf<T extends string>(
  value: unknown,
  source: Source,
  field: string,
  allowed: readonly string[],
): T {
  if (typeof value !== 'string' || !allowed.includes(value)) {
    throw invalid(source, field, `must be equal to one of the allowed values: ${allowed.join(', ')}`);
  }
  return value as T;
}

/**
 * Options from named values (a query string's or a JSON object's), checked as the storage server
 * checks them. Width and height are clamped to 1..maxDimension rather than refused, as storage
 * does; 0 means "not given". Parameters storage does not know are left alone (download, token).
 */
export function readTransformOptions(
  get: (name: string) => unknown,
  source: Source,
  maxDimension: number,
): TransformOptions {
  const options: TransformOptions = {};
  for (const field of ['width', 'height'] as const) {
    const raw = get(field);
    if (raw === undefined || raw === null) continue;
    const n = integerOf(raw, source, field, 0);
    if (n > 0) options[field] = Math.min(n, maxDimension);
  }
  const resize = get('resize');
  if (resize !== undefined && resize !== null)
    options.resize = oneOf<Resize>(resize, source, 'resize', RESIZES);
  const format = get('format');
  if (format !== undefined && format !== null)
    options.format = oneOf<Format>(format, source, 'format', FORMATS);
  const quality = get('quality');
  if (quality !== undefined && quality !== null)
    options.quality = integerOf(quality, source, 'quality', 20, 100);
  // Newer storage servers also place the crop (gravity, x_offset, y_offset); refusing them is
  // better than answering an image cropped elsewhere than asked.
  for (const field of ['gravity', 'x_offset', 'y_offset']) {
    if (get(field) !== undefined && get(field) !== null) {
      throw storageErrors.invalidRequest(`${source}/${field} is not supported by this server`);
    }
  }
  return options;
}

/** The query of a /render/image request. */
export function transformFromQuery(query: URLSearchParams, maxDimension: number): TransformOptions {
  return readTransformOptions((name) => query.get(name) ?? undefined, 'querystring', maxDimension);
}

/** The `transform` of a signing request's body; null when there is none (or it is empty). */
export function transformFromBody(value: unknown, maxDimension: number): TransformOptions | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw storageErrors.invalidRequest('body/transform must be object');
  }
  const record = value as Record<string, unknown>;
  const options = readTransformOptions((name) => record[name], 'body/transform', maxDimension);
  return Object.keys(options).length === 0 ? null : options;
}

/** imgproxy's names for the resize modes, which storage's X-Transformations header shows. */
function resizingType(resize: Resize | undefined): string {
  if (resize === 'contain') return 'fit';
  if (resize === 'fill') return 'force';
  return 'fill';
}

/** The X-Transformations header storage answers a rendering with (empty: no header). */
export function transformationsHeader(options: TransformOptions): string {
  const parts: string[] = [];
  if (options.height) parts.push(`height:${options.height}`);
  if (options.width) parts.push(`width:${options.width}`);
  if (options.width || options.height) parts.push(`resizing_type:${resizingType(options.resize)}`);
  if (options.quality) parts.push(`quality:${options.quality}`);
  if (options.format && options.format !== 'origin') parts.push(`format:${options.format}`);
  return parts.join(',');
}

/** The options as a signed URL's token carries them (the storage server's `transformations` claim). */
export function transformationsClaim(options: TransformOptions): string {
  const parts: string[] = [];
  if (options.height) parts.push(`height:${options.height}`);
  if (options.width) parts.push(`width:${options.width}`);
  if (options.resize) parts.push(`resize:${options.resize}`);
  if (options.quality) parts.push(`quality:${options.quality}`);
  if (options.format) parts.push(`format:${options.format}`);
  return parts.join(',');
}

/**
 * The options a signed URL's token carries. The token was signed by this server, so its values
 * were checked when it was made; unknown or malformed parts are skipped, as storage skips them.
 */
export function transformFromClaim(claim: unknown, maxDimension: number): TransformOptions {
  const options: TransformOptions = {};
  if (typeof claim !== 'string') return options;
  for (const part of claim.split(',')) {
    const [name, value] = part.split(':');
    if (!value) continue;
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if ((name === 'width' || name === 'height') && n > 0) options[name] = Math.min(n, maxDimension);
    else if (name === 'quality' && n >= 20 && n <= 100) options.quality = n;
    else if (name === 'resize' && RESIZES.includes(value)) options.resize = value as Resize;
    else if (name === 'format' && FORMATS.includes(value)) options.format = value as Format;
  }
  return options;
}

/** One spelling per set of options: the part of a cache key that says what was asked. */
export function canonicalOptions(options: TransformOptions): string {
  return [
    `w${options.width ?? 0}`,
    `h${options.height ?? 0}`,
    `r${options.resize ?? 'cover'}`,
    `q${options.quality ?? DEFAULT_QUALITY}`,
    `f${options.format ?? 'auto'}`,
  ].join(',');
}
