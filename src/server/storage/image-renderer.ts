// In charge of turning a stored image into a rendering (sharp, libvips underneath), within bounds
// a hostile file cannot break: the source's bytes and pixels are checked before anything is
// decoded, a fixed number of renderings run at once and a bounded number wait (more are answered
// 429), requests for the same rendering share one piece of work, and finished renderings are
// reused from the cache.
import { createHash } from 'node:crypto';
import sharp, { type Metadata } from 'sharp';
import type { StorageImagesConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { StorageBackend } from './backends/types.js';
import { StorageError, storageErrors } from './errors.js';
import type { CachedImage, ImageCache } from './image-cache.js';
import { canonicalOptions, DEFAULT_QUALITY, type TransformOptions } from './image-options.js';
import { objectKey } from './keys.js';

// libvips' own operation cache would keep decoded images in memory between requests, out of
// sight of every bound here; one thread per rendering lets STORAGE_IMAGE_CONCURRENCY say how many
// cores renderings may take.
sharp.cache(false);
sharp.concurrency(1);

/** As the storage server words a source it cannot render (HTTP 400, statusCode 400). */
const sourceError = (message: string) => new StorageError(400, 'InvalidRequest', 'InvalidRequest', message);
export const imageErrors = {
  unsupported: () => sourceError('The source image is invalid or unsupported for rendering'),
  tooManyPixels: () => sourceError('The source image resolution is too large to process'),
  tooManyBytes: () => sourceError('The source image file is too large to process'),
};

/** Formats a stored image may have; others (SVG, PDF, ...) are not rendered. */
const SOURCE_FORMATS = new Set(['jpeg', 'png', 'webp', 'gif', 'tiff', 'heif']);
type OutputFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'tiff' | 'avif';
const CONTENT_TYPES: Record<OutputFormat, string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  tiff: 'image/tiff',
  avif: 'image/avif',
};
/** A rendering that takes longer than this is abandoned (libvips stops at the next check). */
const RENDER_TIMEOUT_SECONDS = 30;

export interface RenderSource {
  /** the object's version: what its bytes are stored under, and what makes a rendering stale */
  version: string;
  /** the stored size, known before reading */
  size: number;
}

export interface ImageRenderer {
  /** the rendering of source with options; `acceptsWebp` when the client said it takes WebP */
  render(source: RenderSource, options: TransformOptions, acceptsWebp: boolean): Promise<CachedImage>;
}

/** A fixed number of turns, and a bounded line for them. */
function createTurns(concurrency: number, maxWaiting: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async function run<T>(fn: () => Promise<T>): Promise<T> {
    if (running >= concurrency) {
      if (waiting.length >= maxWaiting) {
        throw storageErrors.busy(1, 'Too many image transformations at once; try again shortly');
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    } else running++;
    try {
      return await fn();
    } finally {
      // The turn passes straight to the next in line, so `running` never dips between them.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** The whole object, refused past `max` bytes whatever its row said. */
async function readSource(backend: StorageBackend, version: string, max: number): Promise<Buffer> {
  const found = await backend.get(objectKey(version));
  if (!found) throw storageErrors.noSuchKey();
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of found.stream as AsyncIterable<Buffer>) {
    length += chunk.length;
    if (length > max) {
      (found.stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
      throw imageErrors.tooManyBytes();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, length);
}

function outputFormatOf(sourceFormat: string, compression: string | undefined): OutputFormat {
  if (sourceFormat === 'heif') return compression === 'av1' ? 'avif' : 'jpeg';
  return sourceFormat as OutputFormat;
}

/** Renders source bytes; every failure of the image itself is the caller's 400. */
export async function transformImage(
  source: Buffer,
  options: TransformOptions,
  acceptsWebp: boolean,
  maxPixels: number,
): Promise<CachedImage> {
  let meta: Metadata;
  try {
    // Reads the header only: the dimensions are known before a pixel is decoded.
    meta = await sharp(source, { limitInputPixels: false }).metadata();
  } catch {
    throw imageErrors.unsupported();
  }
  if (!meta.format || !SOURCE_FORMATS.has(meta.format) || !meta.width || !meta.height) {
    throw imageErrors.unsupported();
  }
  if (meta.width * meta.height > maxPixels) throw imageErrors.tooManyPixels();
  if (meta.format === 'heif' && meta.compression !== 'av1') throw imageErrors.unsupported();

  let format: OutputFormat;
  if (options.format === 'webp' || options.format === 'avif') format = options.format;
  else if (options.format !== 'origin' && acceptsWebp) format = 'webp';
  else format = outputFormatOf(meta.format, meta.compression);

  const quality = options.quality ?? DEFAULT_QUALITY;
  // The first frame of an animation only: every further frame would multiply the work.
  let image = sharp(source, { limitInputPixels: maxPixels, sequentialRead: true, pages: 1 })
    .rotate()
    .timeout({ seconds: RENDER_TIMEOUT_SECONDS });
  if (options.width || options.height) {
    image = image.resize(options.width ?? null, options.height ?? null, {
      // imgproxy's fill (crop to cover), fit (within) and force (stretch), which storage maps to.
      fit: options.resize === 'contain' ? 'inside' : options.resize === 'fill' ? 'fill' : 'cover',
      withoutEnlargement: true,
    });
  }
  if (format === 'jpeg') image = image.jpeg({ quality });
  else if (format === 'webp') image = image.webp({ quality });
  else if (format === 'avif') image = image.avif({ quality, effort: 2 });
  else if (format === 'tiff') image = image.tiff({ quality });
  else if (format === 'png') image = image.png();
  else image = image.gif();
  try {
    return { contentType: CONTENT_TYPES[format], body: await image.toBuffer() };
  } catch (error) {
    if (error instanceof Error && /pixel limit/i.test(error.message)) throw imageErrors.tooManyPixels();
    throw imageErrors.unsupported();
  }
}

/** The cache key: the version and the options asked, and whether WebP may be answered. */
export function renderingKey(version: string, options: TransformOptions, acceptsWebp: boolean): string {
  const negotiated = options.format === undefined && acceptsWebp ? 'webp' : '-';
  return createHash('sha256')
    .update(`${version}\n${canonicalOptions(options)}\n${negotiated}`)
    .digest('hex');
}

export function createImageRenderer(
  config: StorageImagesConfig,
  backend: StorageBackend,
  cache: ImageCache,
  logger: Logger,
): ImageRenderer {
  const turn = createTurns(config.concurrency, config.queue);
  const inFlight = new Map<string, Promise<CachedImage>>();

  return {
    async render(source, options, acceptsWebp) {
      if (source.size > config.maxSourceBytes) throw imageErrors.tooManyBytes();
      const key = renderingKey(source.version, options, acceptsWebp);
      const cached = await cache.get(key);
      if (cached) return cached;
      const pending = inFlight.get(key);
      if (pending) return pending;
      const work = turn(async () => {
        const started = performance.now();
        const bytes = await readSource(backend, source.version, config.maxSourceBytes);
        const rendered = await transformImage(bytes, options, acceptsWebp, config.maxPixels);
        logger.debug(
          { ms: Math.round(performance.now() - started), bytes: rendered.body.length },
          'image rendered',
        );
        await cache.put(key, rendered);
        return rendered;
      }).finally(() => inFlight.delete(key));
      inFlight.set(key, work);
      return work;
    },
  };
}
