// The storage backends' contract, run the same against local disk and a real S3-compatible server:
// objects appear whole or not at all, limits are enforced while streaming, ranges, copy, delete,
// and (local disk) a crash mid-upload leaves nothing visible and memory stays flat for 1 GB.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  assembleParts,
  createStorageBackend,
  InvalidObjectKey,
  LocalBackend,
  NoSuchObject,
  ObjectTooLarge,
  type StorageBackend,
} from '../../src/server/storage/backends/index.js';
import { startS3Server, type TestS3Server } from '../support/s3-server.js';

const MiB = 1024 * 1024;

function md5(bytes: Buffer): string {
  return createHash('md5').update(bytes).digest('hex');
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** Distinct, non-repeating bytes, so a misplaced range or a mixed object shows. */
function patterned(size: number, seed = 0): Buffer {
  const bytes = Buffer.alloc(size);
  for (let i = 0; i + 4 <= size; i += 4) bytes.writeUInt32BE((i * 2654435761 + seed) >>> 0, i);
  return bytes;
}

/** A body of size bytes in 64 KiB chunks, made as it is read. */
function generated(size: number, fill = 0x42): Readable {
  const chunk = Buffer.alloc(64 * 1024, fill);
  let left = size;
  return new Readable({
    read() {
      if (left <= 0) return void this.push(null);
      const n = Math.min(left, chunk.length);
      left -= n;
      this.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    },
  });
}

/** Sends part bytes, then fails as a client cut off mid-upload does. */
function failingAfter(bytes: number): Readable {
  let sent = false;
  return new Readable({
    read() {
      if (!sent) {
        sent = true;
        this.push(Buffer.alloc(bytes, 1));
      } else {
        setImmediate(() => this.destroy(new Error('connection reset by the client')));
      }
    },
  });
}

interface Subject {
  backend: StorageBackend;
  /** files a failed upload might have left behind where they could be found later */
  leftovers(): string[];
}

const subjects: [name: string, start: () => Promise<Subject & { stop(): Promise<void> }>][] = [
  [
    'local disk',
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'tenantry-storage-'));
      const backend = new LocalBackend(dir);
      return {
        backend,
        leftovers: () => {
          try {
            return readdirSync(backend.temporaryDirectory);
          } catch {
            return [];
          }
        },
        stop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  ],
  [
    'S3-compatible server',
    async () => {
      const server: TestS3Server = await startS3Server();
      const backend = await createStorageBackend({ storageBackend: server.settings });
      return { backend, leftovers: () => [], stop: () => server.stop() };
    },
  ],
];

describe.each(subjects)('%s', (_name, start) => {
  let subject: Subject & { stop(): Promise<void> };
  let backend: StorageBackend;
  beforeAll(async () => {
    subject = await start();
    backend = subject.backend;
  });
  afterAll(async () => {
    await subject?.stop();
  });

  test('put then get, head: the same bytes, size, etag and content type', async () => {
    const bytes = patterned(300_000);
    const stored = await backend.put('w1/docs/report 2026.pdf', Readable.from([bytes]), {
      contentType: 'application/pdf',
    });
    expect(stored).toMatchObject({ size: bytes.length, contentType: 'application/pdf' });
    expect(stored.etag).toMatch(/^[0-9a-f]{32}$/);
    // The etag follows the content: the same bytes under another key, the same etag; others, another.
    expect((await backend.put('w1/same.pdf', Readable.from([bytes]), {})).etag).toBe(stored.etag);
    expect((await backend.put('w1/other.pdf', Readable.from([patterned(300_000, 1)]), {})).etag).not.toBe(
      stored.etag,
    );
    expect(stored.lastModified).toBeInstanceOf(Date);

    const got = await backend.get('w1/docs/report 2026.pdf');
    expect(got).not.toBeNull();
    expect((await readAll(got!.stream)).equals(bytes)).toBe(true);
    expect(got!.object).toMatchObject({
      size: bytes.length,
      etag: stored.etag,
      contentType: 'application/pdf',
    });

    const head = await backend.head('w1/docs/report 2026.pdf');
    expect(head).toMatchObject({ size: bytes.length, etag: stored.etag, contentType: 'application/pdf' });
    expect(Math.abs(head!.lastModified.getTime() - stored.lastModified.getTime())).toBeLessThan(2000);
  });

  test('an absent object: get and head answer null', async () => {
    expect(await backend.get('w1/never-stored')).toBeNull();
    expect(await backend.head('w1/never-stored')).toBeNull();
  });

  test('an empty object is stored and read back as empty', async () => {
    const stored = await backend.put('w1/empty', Readable.from([]), {});
    expect(stored.size).toBe(0);
    const got = await backend.get('w1/empty');
    expect((await readAll(got!.stream)).length).toBe(0);
    expect(got!.object.size).toBe(0);
  });

  test('ranges: inclusive end, open end, end clamped, start past the end serves nothing', async () => {
    const bytes = patterned(100_000, 7);
    await backend.put('w1/ranged.bin', Readable.from([bytes]), {});
    const read = async (range: { start: number; end?: number }) => {
      const got = await backend.get('w1/ranged.bin', range);
      expect(got!.object.size).toBe(bytes.length);
      return readAll(got!.stream);
    };
    expect((await read({ start: 10, end: 19 })).equals(bytes.subarray(10, 20))).toBe(true);
    expect((await read({ start: 0, end: 0 })).equals(bytes.subarray(0, 1))).toBe(true);
    expect((await read({ start: 99_990 })).equals(bytes.subarray(99_990))).toBe(true);
    expect((await read({ start: 99_000, end: 500_000 })).equals(bytes.subarray(99_000))).toBe(true);
    expect((await read({ start: 100_000 })).length).toBe(0);
    await expect(backend.get('w1/ranged.bin', { start: -1 })).rejects.toBeInstanceOf(RangeError);
    await expect(backend.get('w1/ranged.bin', { start: 10, end: 5 })).rejects.toBeInstanceOf(RangeError);
  });

  test('an object of several multipart parts streams in and out whole', async () => {
    const bytes = patterned(12 * MiB + 12_345, 3);
    const stored = await backend.put('w1/big.bin', Readable.from([bytes]), { maxBytes: 13 * MiB });
    expect(stored.size).toBe(bytes.length);
    const got = await backend.get('w1/big.bin');
    expect(md5(await readAll(got!.stream))).toBe(md5(bytes));
    const tail = await backend.get('w1/big.bin', { start: 12 * MiB });
    expect((await readAll(tail!.stream)).equals(bytes.subarray(12 * MiB))).toBe(true);
  });

  test('copy: the bytes and content type under the new key, the source unchanged', async () => {
    const bytes = patterned(50_000, 9);
    await backend.put('w1/a/original.txt', Readable.from([bytes]), { contentType: 'text/plain' });
    const copied = await backend.copy('w1/a/original.txt', 'w2/b/copy (1).txt');
    expect(copied).toMatchObject({ size: bytes.length, contentType: 'text/plain' });
    expect((await readAll((await backend.get('w2/b/copy (1).txt'))!.stream)).equals(bytes)).toBe(true);
    expect((await readAll((await backend.get('w1/a/original.txt'))!.stream)).equals(bytes)).toBe(true);
    expect((await backend.head('w2/b/copy (1).txt'))!.contentType).toBe('text/plain');
    await expect(backend.copy('w1/a/missing.txt', 'w2/b/x.txt')).rejects.toBeInstanceOf(NoSuchObject);
    expect(await backend.head('w2/b/x.txt')).toBeNull();
  });

  test('delete: many keys at once, absent ones ignored; a bad key deletes nothing', async () => {
    const keys = Array.from({ length: 40 }, (_, i) => `w3/many/${i}.txt`);
    for (const key of keys) await backend.put(key, Readable.from([Buffer.from(key)]), {});
    await expect(backend.delete([keys[0]!, '../escape'])).rejects.toBeInstanceOf(InvalidObjectKey);
    expect(await backend.head(keys[0]!)).not.toBeNull();
    await backend.delete([...keys.slice(0, 30), 'w3/many/never-there']);
    for (const key of keys.slice(0, 30)) expect(await backend.head(key)).toBeNull();
    for (const key of keys.slice(30)) expect(await backend.head(key)).not.toBeNull();
    await backend.delete([]);
  });

  test('past maxBytes the upload is refused while streaming and nothing is stored', async () => {
    const body = new PassThrough();
    const tooLarge = backend.put('w1/limited.bin', body, { maxBytes: 1 * MiB });
    // Written in pieces with backpressure: the refusal comes before the whole body was sent.
    let written = 0;
    const writing = (async () => {
      const chunk = Buffer.alloc(64 * 1024, 5);
      while (written < 64 * MiB && !body.destroyed) {
        written += chunk.length;
        if (!body.write(chunk)) {
          const drained = await Promise.race([
            new Promise((r) => body.once('drain', () => r(true))),
            tooLarge.then(
              () => false,
              () => false,
            ),
          ]);
          if (!drained) break;
        }
      }
    })();
    await expect(tooLarge).rejects.toBeInstanceOf(ObjectTooLarge);
    await writing;
    expect(written).toBeLessThan(32 * MiB);
    // The request body is left undestroyed, so an HTTP handler can still answer on its connection.
    expect(body.destroyed).toBe(false);
    expect(await backend.head('w1/limited.bin')).toBeNull();
    expect(subject.leftovers()).toEqual([]);
    // The client goes away later: its body's error is still heard, never an uncaught exception.
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.prependListener('uncaughtException', onUncaught);
    try {
      body.destroy(new Error('the client went away after the refusal'));
      await new Promise((r) => setTimeout(r, 20));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(uncaught).toEqual([]);
  });

  test('a refused or failed replacement leaves the previous object whole', async () => {
    const previous = patterned(200_000, 11);
    await backend.put('w1/kept.bin', Readable.from([previous]), {});
    await expect(
      backend.put('w1/kept.bin', generated(8 * MiB), { maxBytes: 6 * MiB }),
    ).rejects.toBeInstanceOf(ObjectTooLarge);
    await expect(backend.put('w1/kept.bin', failingAfter(7 * MiB), {})).rejects.toThrow(/connection reset/);
    expect((await readAll((await backend.get('w1/kept.bin'))!.stream)).equals(previous)).toBe(true);
    expect(subject.leftovers()).toEqual([]);
  });

  test('a body that errors mid-stream stores nothing', async () => {
    await expect(backend.put('w1/cut.bin', failingAfter(300_000), {})).rejects.toThrow(/connection reset/);
    await expect(backend.put('w1/cut-big.bin', failingAfter(11 * MiB), {})).rejects.toThrow(
      /connection reset/,
    );
    expect(await backend.head('w1/cut.bin')).toBeNull();
    expect(await backend.head('w1/cut-big.bin')).toBeNull();
    expect(subject.leftovers()).toEqual([]);
  });

  test('concurrent puts to one key leave exactly one of them, whole', async () => {
    const bodies = Array.from({ length: 6 }, (_, i) => patterned(2 * MiB, 100 + i));
    const results = await Promise.all(
      bodies.map((bytes) => backend.put('w1/raced.bin', generatedFrom(bytes), { contentType: 'x/raced' })),
    );
    const stored = await readAll((await backend.get('w1/raced.bin'))!.stream);
    const winner = bodies.findIndex((bytes) => bytes.equals(stored));
    expect(winner).toBeGreaterThanOrEqual(0);
    expect((await backend.head('w1/raced.bin'))!.etag).toBe(results[winner]!.etag);
  });

  test('parts of a resumable upload join into one object, in order, within the limit', async () => {
    const parts = [patterned(6 * MiB, 31), patterned(6 * MiB, 32), patterned(12_345, 33)];
    const keys = parts.map((_, i) => `uploads/r1/${i}`);
    for (const [i, part] of parts.entries()) await backend.put(keys[i]!, Readable.from([part]), {});
    const joined = await assembleParts(backend, keys, 'w1/joined.bin', { contentType: 'video/mp4' });
    expect(joined).toMatchObject({ size: 12 * MiB + 12_345, contentType: 'video/mp4' });
    expect(md5(await readAll((await backend.get('w1/joined.bin'))!.stream))).toBe(md5(Buffer.concat(parts)));

    await expect(
      assembleParts(backend, [keys[0]!, 'uploads/r1/missing', keys[2]!], 'w1/joined-missing.bin', {}),
    ).rejects.toBeInstanceOf(NoSuchObject);
    expect(await backend.head('w1/joined-missing.bin')).toBeNull();
    await expect(
      assembleParts(backend, keys, 'w1/joined-large.bin', { maxBytes: 10 * MiB }),
    ).rejects.toBeInstanceOf(ObjectTooLarge);
    expect(await backend.head('w1/joined-large.bin')).toBeNull();
    expect(subject.leftovers()).toEqual([]);
  });

  test('keys that could escape or be ambiguous are refused before anything is read', async () => {
    for (const key of [
      '../outside',
      'a/../../b',
      '/etc/passwd',
      'a//b',
      'a/./b',
      'nul\0byte',
      'back\\slash',
      '',
      'x'.repeat(1025),
    ]) {
      const body = new PassThrough();
      await expect(backend.put(key, body, {})).rejects.toBeInstanceOf(InvalidObjectKey);
      expect(body.readableFlowing).not.toBe(true);
      await expect(backend.get(key)).rejects.toBeInstanceOf(InvalidObjectKey);
      await expect(backend.head(key)).rejects.toBeInstanceOf(InvalidObjectKey);
    }
  });
});

/** The bytes as a stream of 256 KiB chunks, read as the consumer asks: uploads interleave. */
function generatedFrom(bytes: Buffer): Readable {
  let at = 0;
  return new Readable({
    read() {
      if (at >= bytes.length) return void this.push(null);
      const next = bytes.subarray(at, at + 256 * 1024);
      at += next.length;
      setImmediate(() => this.push(next));
    },
  });
}

describe('local disk', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'tenantry-storage-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('files are named by the hash of their key, inside the folder, whatever the key', async () => {
    const backend = new LocalBackend(dir);
    await backend.put('w1/..hidden/évènement ü.txt', Readable.from([Buffer.from('x')]), {});
    const file = backend.pathOf('w1/..hidden/évènement ü.txt');
    expect(file.startsWith(path.join(dir, 'objects') + path.sep)).toBe(true);
    expect(path.basename(file)).toMatch(/^[0-9a-f]{64}$/);
    expect(statSync(file).isFile()).toBe(true);
    // "a" and "a/b" are both objects, as in S3: no file stands where a folder must.
    await backend.put('w1/a', Readable.from([Buffer.from('a')]), {});
    await backend.put('w1/a/b', Readable.from([Buffer.from('ab')]), {});
    expect((await readAll((await backend.get('w1/a'))!.stream)).toString()).toBe('a');
    expect((await readAll((await backend.get('w1/a/b'))!.stream)).toString()).toBe('ab');
  });

  test('a crash mid-upload leaves nothing visible, the previous object whole, and the sweep removes the temporary file', async () => {
    const backend = new LocalBackend(dir);
    const previous = patterned(100_000, 21);
    const stored = await backend.put('w9/crashed.bin', Readable.from([previous]), {});
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'tests/storage/fixtures/crash-writer.ts', dir, 'w9/crashed.bin'],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const temporary = () =>
      readdirSync(backend.temporaryDirectory)
        .filter((f) => f.endsWith('.part'))
        .map((f) => path.join(backend.temporaryDirectory, f));
    const deadline = Date.now() + 20_000;
    while (!temporary().some((f) => statSync(f).size > 16 * MiB)) {
      if (Date.now() > deadline || child.exitCode !== null)
        throw new Error(`the writer did not write: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;

    expect(temporary()).toHaveLength(1);
    const head = await backend.head('w9/crashed.bin');
    expect(head!.size).toBe(previous.length);
    expect((await readAll((await backend.get('w9/crashed.bin'))!.stream)).equals(previous)).toBe(true);

    // The next start sweeps what the crash left.
    await createStorageBackend({ storageBackend: { kind: 'local', dir } });
    expect(temporary()).toEqual([]);
    expect((await backend.head('w9/crashed.bin'))!.etag).toBe(stored.etag);
  }, 60_000);

  test('the sweep leaves temporary files newer than its cut-off alone', async () => {
    const backend = new LocalBackend(dir);
    const slow = new PassThrough();
    const putting = backend.put('w9/slow.bin', slow, {});
    slow.write(Buffer.alloc(1024));
    await new Promise((r) => setTimeout(r, 50));
    expect(await backend.sweepTemporaryFiles(new Date(Date.now() - 60_000))).toBe(0);
    slow.end();
    await putting;
    expect(await backend.head('w9/slow.bin')).not.toBeNull();
  });

  test('1 GB streams in and out with memory flat', async () => {
    const backend = new LocalBackend(dir);
    const size = 1024 * MiB;
    await backend.put('w9/warm-up', generated(8 * MiB), {});
    const baseline = process.memoryUsage.rss();
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 20);
    try {
      const stored = await backend.put('w9/gigabyte.bin', generated(size, 0x5a), { maxBytes: size });
      expect(stored.size).toBe(size);
      const got = await backend.get('w9/gigabyte.bin');
      let read = 0;
      for await (const chunk of got!.stream) read += (chunk as Buffer).length;
      expect(read).toBe(size);
    } finally {
      clearInterval(sampler);
      await backend.delete(['w9/gigabyte.bin']);
    }
    const aboveIdle = (peak - baseline) / MiB;
    console.log(`1 GB through the local backend: peak RSS ${aboveIdle.toFixed(1)} MiB above idle`);
    expect(aboveIdle).toBeLessThan(100);
  }, 180_000);
});
