// In charge of keeping image renderings on disk for reuse, bounded by bytes: each rendering is one
// file named by its key (which names the object version and the options, so an overwrite, a new
// version, is never answered with an old rendering), the least recently used go first, and a
// rendering is written whole (a temporary file renamed) so a reader never sees half of one.
// Renderings are disposable: whatever goes wrong here is a miss, never a failed request.
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../logger.js';

export interface CachedImage {
  contentType: string;
  body: Buffer;
}

export interface ImageCache {
  get(key: string): Promise<CachedImage | null>;
  put(key: string, image: CachedImage): Promise<void>;
  /** bytes held now (for tests and metrics) */
  size(): number;
}

/** A file holds its content type, a newline, then the image's bytes. */
function encode(image: CachedImage): Buffer {
  return Buffer.concat([Buffer.from(`${image.contentType}\n`), image.body]);
}

function decode(file: Buffer): CachedImage | null {
  const newline = file.indexOf(10);
  if (newline <= 0 || newline > 100) return null;
  return { contentType: file.subarray(0, newline).toString(), body: file.subarray(newline + 1) };
}

const KEY = /^[0-9a-f]{64}$/;

export function createImageCache(dir: string, maxBytes: number, logger: Logger): ImageCache {
  /** key -> bytes on disk, in order of last use (a Map keeps insertion order) */
  const entries = new Map<string, number>();
  let total = 0;
  const fileOf = (key: string) => path.join(dir, key.slice(0, 2), key);

  const forget = (key: string) => {
    const size = entries.get(key);
    if (size === undefined) return;
    entries.delete(key);
    total -= size;
  };

  // What an earlier run left is kept, oldest first, so a restart does not start cold.
  const ready: Promise<void> =
    maxBytes === 0
      ? Promise.resolve()
      : (async () => {
          const found: { key: string; size: number; at: number }[] = [];
          for (const shard of await readdir(dir).catch(() => [] as string[])) {
            for (const name of await readdir(path.join(dir, shard)).catch(() => [] as string[])) {
              if (!KEY.test(name)) continue;
              const info = await stat(path.join(dir, shard, name)).catch(() => null);
              if (info?.isFile()) found.push({ key: name, size: info.size, at: info.mtimeMs });
            }
          }
          found.sort((a, b) => a.at - b.at);
          for (const f of found) {
            entries.set(f.key, f.size);
            total += f.size;
          }
          await evict();
        })().catch((error: unknown) => logger.warn({ err: error }, 'image cache could not be read'));

  async function evict(): Promise<void> {
    while (total > maxBytes) {
      const oldest = entries.keys().next().value;
      if (oldest === undefined) break;
      forget(oldest);
      await unlink(fileOf(oldest)).catch(() => undefined);
    }
  }

  return {
    async get(key) {
      if (maxBytes === 0 || !KEY.test(key)) return null;
      await ready;
      const size = entries.get(key);
      if (size === undefined) return null;
      entries.delete(key);
      entries.set(key, size);
      try {
        return decode(await readFile(fileOf(key)));
      } catch {
        // Removed by another instance sharing the folder, or by hand: render again.
        forget(key);
        return null;
      }
    },
    async put(key, image) {
      if (maxBytes === 0 || !KEY.test(key)) return;
      const bytes = encode(image);
      // One rendering may not push out more than a quarter of the others.
      if (bytes.length > maxBytes / 4) return;
      await ready;
      try {
        const file = fileOf(key);
        await mkdir(path.dirname(file), { recursive: true });
        const temporary = `${file}.${randomUUID()}.tmp`;
        await writeFile(temporary, bytes);
        await rename(temporary, file);
        forget(key);
        entries.set(key, bytes.length);
        total += bytes.length;
        await evict();
      } catch (error) {
        logger.warn({ err: error }, 'image rendering could not be cached');
      }
    },
    size: () => total,
  };
}
