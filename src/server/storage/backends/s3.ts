// In charge of keeping stored files' bytes in a bucket of an S3-compatible service, with the same
// promises as local disk: an object appears whole or not at all (a multipart upload completes or
// is aborted), and a size limit stops the upload while it streams.
import {
  CopyObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  S3Client,
  type GetObjectCommandOutput,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { Readable } from 'node:stream';
import { countBody } from './counting.js';
import { assertObjectKey, NoSuchObject } from './keys.js';
import { ByteWindow, servedRange } from './range.js';
import type { StorageBackend, StoredObject } from './types.js';

export interface S3BackendOptions {
  /** unset = AWS itself for the region */
  endpoint: string | undefined;
  bucket: string;
  region: string;
  /** unset = the SDK's default chain (environment, profile, instance role) */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
  forcePathStyle: boolean;
}

/** S3's limits: a multipart part is at least 5 MiB, and one CopyObject copies at most 5 GiB. */
const PART_SIZE = 5 * 1024 * 1024;
/** Parts uploaded at once: an upload holds at most this many parts (plus one being filled) in memory. */
const PARTS_AT_ONCE = 4;
const MAX_SINGLE_COPY = 5 * 1024 * 1024 * 1024;
/** Keys one DeleteObjects request may name. */
const DELETE_BATCH = 1000;

function status(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

function unquote(etag: string | undefined): string {
  return (etag ?? '').replace(/^"|"$/g, '');
}

export class S3Backend implements StorageBackend {
  readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3BackendOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      endpoint: options.endpoint,
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      ...(options.credentials ? { credentials: options.credentials } : {}),
      // Checksums only where S3 demands them: several S3-compatible servers do not understand the
      // aws-chunked trailers the SDK otherwise adds to every streamed upload.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(
    key: string,
    body: NodeJS.ReadableStream,
    options: { maxBytes?: number; contentType?: string },
  ): Promise<StoredObject> {
    assertObjectKey(key);
    const counter = countBody(body, options.maxBytes);
    let bodyError: unknown;
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: key,
        Body: counter,
        ...(options.contentType !== undefined ? { ContentType: options.contentType } : {}),
      },
      partSize: PART_SIZE,
      queueSize: PARTS_AT_ONCE,
      // A failed upload aborts its multipart upload, so no part is left behind or ever visible.
      leavePartsOnError: false,
    });
    counter.once('error', (error) => {
      bodyError = error;
      void upload.abort().catch(() => undefined);
    });
    try {
      const result = await upload.done();
      return {
        size: counter.bytes,
        etag: unquote(result.ETag),
        ...(options.contentType !== undefined ? { contentType: options.contentType } : {}),
        lastModified: new Date(),
      };
    } catch (error) {
      counter.destroy();
      // The body's own failure (too large, cut short) is the reason, not the abort it caused.
      if (bodyError !== undefined) throw bodyError;
      throw error;
    }
  }

  async get(
    key: string,
    range?: { start: number; end?: number },
  ): Promise<{ stream: NodeJS.ReadableStream; object: StoredObject } | null> {
    assertObjectKey(key);
    // Validated as every backend validates ranges; S3 itself clamps the end to the object.
    servedRange(range, Number.MAX_SAFE_INTEGER);
    let response: GetObjectCommandOutput;
    try {
      response = await this.client.send(
        new GetObjectCommand({
          Bucket: this.bucket,
          Key: key,
          ...(range ? { Range: `bytes=${range.start}-${range.end ?? ''}` } : {}),
        }),
      );
    } catch (error) {
      if (status(error) === 404) return null;
      if (status(error) === 416) {
        // A range that starts past the end: the object exists, and no byte of it is served.
        const object = await this.head(key);
        return object ? { stream: Readable.from([]), object } : null;
      }
      throw error;
    }
    const answered = response.ContentRange?.match(/^bytes (\d+)-(\d+)\/(\d+)$/);
    const object: StoredObject = {
      size: answered ? Number(answered[3]) : (response.ContentLength ?? 0),
      etag: unquote(response.ETag),
      lastModified: response.LastModified ?? new Date(0),
    };
    if (response.ContentType !== undefined) object.contentType = response.ContentType;
    const body = response.Body as Readable;
    if (!range) return { stream: body, object };
    // What was asked, clamped to the object; what was answered may start earlier or end later.
    const asked = servedRange(range, object.size);
    if (!asked) {
      body.destroy();
      return { stream: Readable.from([]), object };
    }
    const answeredStart = answered ? Number(answered[1]) : 0;
    const answeredEnd = answered ? Number(answered[2]) : object.size - 1;
    if (answeredStart === asked.start && answeredEnd === asked.end) return { stream: body, object };
    if (answeredStart > asked.start || answeredEnd < asked.end) {
      body.destroy();
      throw new Error(
        `the S3 server answered bytes ${answeredStart}-${answeredEnd} for ${asked.start}-${asked.end}`,
      );
    }
    const window = new ByteWindow(asked.start - answeredStart, asked.end - asked.start + 1);
    body.once('error', (error) => window.destroy(error));
    return { stream: body.pipe(window), object };
  }

  async head(key: string): Promise<StoredObject | null> {
    assertObjectKey(key);
    try {
      const response = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      const object: StoredObject = {
        size: response.ContentLength ?? 0,
        etag: unquote(response.ETag),
        lastModified: response.LastModified ?? new Date(0),
      };
      if (response.ContentType !== undefined) object.contentType = response.ContentType;
      return object;
    } catch (error) {
      if (status(error) === 404) return null;
      throw error;
    }
  }

  async copy(from: string, to: string): Promise<StoredObject> {
    assertObjectKey(to);
    const source = await this.head(from);
    if (!source) throw new NoSuchObject('no object at the copy source');
    if (source.size > MAX_SINGLE_COPY) {
      // Past one CopyObject's limit the bytes pass through this process, streamed.
      const got = await this.get(from);
      if (!got) throw new NoSuchObject('no object at the copy source');
      return this.put(
        to,
        got.stream,
        source.contentType !== undefined ? { contentType: source.contentType } : {},
      );
    }
    const result = await this.client.send(
      new CopyObjectCommand({
        Bucket: this.bucket,
        Key: to,
        CopySource: `${this.bucket}/${from.split('/').map(encodeURIComponent).join('/')}`,
        MetadataDirective: 'COPY',
      }),
    );
    return {
      ...source,
      etag: unquote(result.CopyObjectResult?.ETag) || source.etag,
      lastModified: result.CopyObjectResult?.LastModified ?? new Date(),
    };
  }

  async delete(keys: string[]): Promise<void> {
    // Every key is checked before any request, so a bad key deletes nothing.
    for (const key of keys) assertObjectKey(key);
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      const result = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
        }),
      );
      const failed = (result.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
      if (failed.length > 0) {
        throw new Error(
          `S3 refused to delete ${failed.length} object(s): ${failed[0]?.Code ?? 'unknown error'}`,
        );
      }
    }
  }
}
