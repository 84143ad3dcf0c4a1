// In charge of keeping stored files' bytes on local disk: each object is one file, written whole to
// a temporary file, flushed, then renamed into place, so a reader sees the old object or the new
// one and a crash leaves at most a temporary file, which the sweep removes.
import { createHash, randomBytes } from 'node:crypto';
import fs, { type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { countBody, type CountingStream } from './counting.js';
import { assertObjectKey, NoSuchObject } from './keys.js';
import { servedRange } from './range.js';
import type { StorageBackend, StoredObject } from './types.js';

/*
 * File layout: a header, then the object's bytes from dataOffset (a multiple of 512, so reads of
 * the data stay aligned). Keeping the header in the same file keeps one rename atomic for bytes
 * and metadata alike.
 *   0  magic "TNSTOR1\n"   8  dataOffset (u32 BE)   12  JSON length (u32 BE)
 *   16 etag, 32 ASCII hex digits (zeros until the whole object was hashed)   48  JSON {key, contentType}
 */
const MAGIC = Buffer.from('TNSTOR1\n', 'ascii');
const ETAG_AT = 16;
const JSON_AT = 48;
const ALIGN = 512;
const TEMP_SUFFIX = '.part';
/**
 * Bytes an upload may have waiting for the disk before its body is paused: 16 KiB (Node's default)
 * made every 64 KiB network read wait for its write; 1 MiB lets writes gather (writev) while the
 * next bytes arrive.
 */
const WRITE_BUFFER = 1024 * 1024;
/**
 * While a large upload streams, what was written is flushed every this many bytes, in the
 * background: the disk works while the next bytes arrive, and the flush that must finish before
 * the rename has at most this much left to write instead of the whole object.
 */
const FLUSH_EVERY = 32 * 1024 * 1024;
/** A temporary file nothing wrote to for this long belongs to no upload still running. */
const STALE_TEMP_MS = 60 * 60 * 1000;

interface Header {
  dataOffset: number;
  etag: string;
  key: string;
  contentType: string | undefined;
}

function encodeHeader(key: string, contentType: string | undefined): Buffer {
  const json = Buffer.from(JSON.stringify({ key, contentType }), 'utf8');
  const dataOffset = Math.ceil((JSON_AT + json.length) / ALIGN) * ALIGN;
  const header = Buffer.alloc(dataOffset);
  MAGIC.copy(header, 0);
  header.writeUInt32BE(dataOffset, 8);
  header.writeUInt32BE(json.length, 12);
  header.fill('0', ETAG_AT, JSON_AT);
  json.copy(header, JSON_AT);
  return header;
}

async function readHeader(handle: FileHandle, file: string): Promise<Header> {
  const first = Buffer.alloc(4096);
  const { bytesRead } = await handle.read(first, 0, first.length, 0);
  if (bytesRead < JSON_AT || !first.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new Error(`stored object ${file} has no valid header`);
  }
  const dataOffset = first.readUInt32BE(8);
  const jsonLength = first.readUInt32BE(12);
  let json = first.subarray(JSON_AT, Math.min(bytesRead, JSON_AT + jsonLength));
  if (json.length < jsonLength) {
    json = Buffer.alloc(jsonLength);
    await handle.read(json, 0, jsonLength, JSON_AT);
  }
  const meta = JSON.parse(json.toString('utf8')) as { key: string; contentType?: string };
  return {
    dataOffset,
    etag: first.toString('ascii', ETAG_AT, JSON_AT),
    key: meta.key,
    contentType: meta.contentType,
  };
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/** Makes a rename (or a new file) in dir survive a power cut, where the file system allows it. */
async function syncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await fs.open(dir, 'r');
    await handle.sync();
  } catch (error) {
    // Some file systems refuse to sync a directory; the rename itself is still atomic there.
    if (!['EINVAL', 'EISDIR', 'EPERM', 'EBADF'].includes((error as NodeJS.ErrnoException).code ?? ''))
      throw error;
  } finally {
    await handle?.close();
  }
}

export class LocalBackend implements StorageBackend {
  private readonly objectsDir: string;
  private readonly tempDir: string;

  constructor(readonly root: string) {
    this.objectsDir = path.join(root, 'objects');
    this.tempDir = path.join(root, 'tmp');
  }

  /**
   * The file of key: named by the SHA-256 of the key, never by the key itself, so no key can reach
   * outside the folder, collide with another as file and folder ("a" and "a/b"), or exceed a file
   * name's length; two levels of fan-out keep folders small.
   */
  pathOf(key: string): string {
    assertObjectKey(key);
    const name = createHash('sha256').update(key, 'utf8').digest('hex');
    return path.join(this.objectsDir, name.slice(0, 2), name.slice(2, 4), name);
  }

  /** Where temporary files live: the same file system as the objects, so a rename is atomic. */
  get temporaryDirectory(): string {
    return this.tempDir;
  }

  async put(
    key: string,
    body: NodeJS.ReadableStream,
    options: { maxBytes?: number; contentType?: string },
  ): Promise<StoredObject> {
    const target = this.pathOf(key);
    const header = encodeHeader(key, options.contentType);
    await fs.mkdir(path.dirname(target), { recursive: true });
    await fs.mkdir(this.tempDir, { recursive: true });
    const temp = path.join(this.tempDir, randomBytes(16).toString('hex') + TEMP_SUFFIX);
    let handle: FileHandle | undefined = await fs.open(temp, 'wx', 0o600);
    let counter: CountingStream | undefined;
    try {
      counter = countBody(body, options.maxBytes);
      await handle.write(header, 0, header.length, 0);
      // The stream owns the descriptor from here and closes it, ended or failed (a close waits
      // for a background flush still running on it).
      const writing = handle;
      const out = writing.createWriteStream({ start: header.length, highWaterMark: WRITE_BUFFER });
      handle = undefined;
      let flushedAt = 0;
      let flushing = false;
      counter.onProgress = (bytes) => {
        if (flushing || bytes - flushedAt < FLUSH_EVERY) return;
        flushing = true;
        flushedAt = bytes;
        // A failed background flush is not the upload's failure: the final flush decides.
        void writing
          .datasync()
          .catch(() => undefined)
          .finally(() => (flushing = false));
      };
      await pipeline(counter, out);
      const etag = counter.etag();
      // Reopened for the etag and the flush: the bytes and header reach the disk before the name.
      handle = await fs.open(temp, 'r+');
      await handle.write(Buffer.from(etag, 'ascii'), 0, etag.length, ETAG_AT);
      await handle.sync();
      const { mtime } = await handle.stat();
      await handle.close();
      handle = undefined;
      await fs.rename(temp, target);
      await syncDirectory(path.dirname(target));
      return { size: counter.bytes, etag, contentType: options.contentType, lastModified: mtime };
    } catch (error) {
      counter?.destroy();
      await handle?.close().catch(() => undefined);
      await fs.rm(temp, { force: true });
      throw error;
    }
  }

  async get(
    key: string,
    range?: { start: number; end?: number },
  ): Promise<{ stream: NodeJS.ReadableStream; object: StoredObject } | null> {
    const opened = await this.open(key);
    if (!opened) return null;
    const { handle, header, object } = opened;
    let served: { start: number; end: number } | null;
    try {
      served = servedRange(range, object.size);
    } catch (error) {
      await handle.close();
      throw error;
    }
    if (!served) {
      await handle.close();
      return { stream: Readable.from([]), object };
    }
    // Read through the descriptor already open: a concurrent replacement renames a new file over
    // the name, and this reader keeps the object it found, whole.
    const stream = handle.createReadStream({
      start: header.dataOffset + served.start,
      end: header.dataOffset + served.end,
      autoClose: true,
    });
    return { stream, object };
  }

  async head(key: string): Promise<StoredObject | null> {
    const opened = await this.open(key);
    if (!opened) return null;
    await opened.handle.close();
    return opened.object;
  }

  async copy(from: string, to: string): Promise<StoredObject> {
    this.pathOf(to);
    const source = await this.get(from);
    if (!source) throw new NoSuchObject(`no object at the copy's source`);
    return this.put(to, source.stream, { contentType: source.object.contentType });
  }

  async delete(keys: string[]): Promise<void> {
    // Every key is checked before any file goes, so a bad key deletes nothing.
    const files = keys.map((key) => this.pathOf(key));
    const batch = 32;
    for (let i = 0; i < files.length; i += batch) {
      await Promise.all(
        files.slice(i, i + batch).map((file) =>
          fs.rm(file, { force: true }).catch((error: unknown) => {
            if (!isMissing(error)) throw error;
          }),
        ),
      );
    }
  }

  /**
   * Removes temporary files last written before olderThan: what uploads cut short by a crash left.
   * Run at start with the start time, and hourly for files untouched for an hour. Another process
   * sharing the folder loses at most an upload that had stalled: its rename then fails and that
   * upload is refused, never half-stored.
   */
  async sweepTemporaryFiles(olderThan: Date): Promise<number> {
    let names: string[];
    try {
      names = await fs.readdir(this.tempDir);
    } catch (error) {
      if (isMissing(error)) return 0;
      throw error;
    }
    let removed = 0;
    for (const name of names) {
      if (!name.endsWith(TEMP_SUFFIX)) continue;
      const file = path.join(this.tempDir, name);
      try {
        const { mtimeMs } = await fs.stat(file);
        if (mtimeMs < olderThan.getTime()) {
          await fs.rm(file, { force: true });
          removed += 1;
        }
      } catch (error) {
        if (!isMissing(error)) throw error;
      }
    }
    return removed;
  }

  /** Sweeps now (files older than this moment), then every hour; the timer never keeps the process up. */
  startSweeping(): Promise<number> {
    const timer = setInterval(() => {
      void this.sweepTemporaryFiles(new Date(Date.now() - STALE_TEMP_MS)).catch(() => undefined);
    }, STALE_TEMP_MS);
    timer.unref();
    return this.sweepTemporaryFiles(new Date());
  }

  private async open(
    key: string,
  ): Promise<{ handle: FileHandle; header: Header; object: StoredObject } | null> {
    const file = this.pathOf(key);
    let handle: FileHandle;
    try {
      handle = await fs.open(file, 'r');
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    try {
      const header = await readHeader(handle, file);
      const stat = await handle.stat();
      const object: StoredObject = {
        size: stat.size - header.dataOffset,
        etag: header.etag,
        lastModified: stat.mtime,
      };
      if (header.contentType !== undefined) object.contentType = header.contentType;
      return { handle, header, object };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }
}
