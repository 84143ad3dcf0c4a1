// Test support for resumable uploads: tus-js-client driven as an application drives it (its Node
// build, Buffer sources, 6 MB chunks as Supabase prescribes), raw TUS requests for what a client
// library never sends, and a look at what the server keeps of uploads in progress.
import * as tus from 'tus-js-client';
import type { TestServer } from '../support/server.js';

export const MB = 1024 * 1024;
/** The chunk size Supabase documents for its resumable endpoint. */
export const CHUNK = 6 * MB;

export interface TusOptions {
  headers?: Record<string, string>;
  metadata: Record<string, string>;
  /** '/sign' for the signed variant */
  variant?: '' | '/sign';
  uploadUrl?: string;
  chunkSize?: number;
  /** send the first chunk with the creation request (creation-with-upload) */
  uploadDataDuringCreation?: boolean;
  /** called with bytes sent so far; may abort the upload */
  onProgress?: (sent: number, upload: tus.Upload) => void;
  /** called with the bytes the server acknowledged after each chunk; may abort the upload */
  onChunkComplete?: (accepted: number, upload: tus.Upload) => void;
  /** every request the client makes: method and Upload-Offset */
  requests?: { method: string; offset: string | undefined }[];
}

export interface TusOutcome {
  url: string | null;
  error: tus.DetailedError | Error | null;
  status: number | null;
  body: string | null;
}

/** Runs one tus-js-client upload to its end, its failure or its abort; never throws. */
export function tusUpload(server: TestServer, file: Buffer, options: TusOptions): Promise<TusOutcome> {
  return new Promise((resolve) => {
    const settle = (error: tus.DetailedError | Error | null) => {
      const response = error && 'originalResponse' in error ? error.originalResponse : null;
      resolve({
        url: upload.url,
        error,
        status: response ? response.getStatus() : null,
        body: response ? response.getBody() : null,
      });
    };
    const upload: tus.Upload = new tus.Upload(file, {
      endpoint: `${server.url}/storage/v1/upload/resumable${options.variant ?? ''}`,
      ...(options.uploadUrl ? { uploadUrl: options.uploadUrl } : {}),
      chunkSize: options.chunkSize ?? CHUNK,
      uploadDataDuringCreation: options.uploadDataDuringCreation ?? false,
      retryDelays: [],
      onShouldRetry: () => false,
      removeFingerprintOnSuccess: true,
      headers: options.headers ?? {},
      metadata: options.metadata,
      onBeforeRequest: (req) => {
        options.requests?.push({
          method: req.getMethod(),
          offset: req.getHeader('Upload-Offset') ?? undefined,
        });
      },
      onProgress: (sent) => options.onProgress?.(sent, upload),
      onChunkComplete: (_size, accepted) => options.onChunkComplete?.(accepted, upload),
      onError: (error) => settle(error),
      onSuccess: () => settle(null),
    });
    upload.start();
    // abort() settles neither callback: the test that aborts resolves through this.
    const abort = upload.abort.bind(upload);
    upload.abort = async (shouldTerminate?: boolean) => {
      await abort(shouldTerminate);
      settle(new Error('aborted'));
    };
  });
}

/** A raw TUS request to /storage/v1/upload/resumable{path}. */
export async function tusFetch(
  server: TestServer,
  method: string,
  pathOrUrl: string,
  headers: Record<string, string>,
  body?: Buffer,
): Promise<Response> {
  const url = pathOrUrl.startsWith('http')
    ? pathOrUrl
    : `${server.url}/storage/v1/upload/resumable${pathOrUrl}`;
  return fetch(url, {
    method,
    headers: { 'tus-resumable': '1.0.0', ...headers },
    ...(body ? { body: new Uint8Array(body) } : {}),
  });
}

/** Upload-Metadata as tus encodes it. */
export function tusMetadata(entries: Record<string, string>): string {
  return Object.entries(entries)
    .map(([k, v]) => `${k} ${Buffer.from(v).toString('base64')}`)
    .join(',');
}

/** Uploads in progress the server keeps, and the parts they hold. */
export async function uploadsInProgress(
  server: TestServer,
): Promise<{ name: string; offset: number; parts: number }[]> {
  const { rows } = await server.pool.query<{ name: string; offset: string; parts: number }>(
    `select name, upload_offset as offset, cardinality(parts) as parts
     from internal.storage_resumable_uploads order by created_at`,
  );
  return rows.map((r) => ({ name: r.name, offset: Number(r.offset), parts: r.parts }));
}

/** Deterministic bytes of a given size (a pattern no two chunks share). */
export function fileOf(size: number, seed = 1): Buffer {
  const buffer = Buffer.alloc(size);
  let x = seed * 2654435761;
  for (let i = 0; i < size; i += 4) {
    x = (x * 1103515245 + 12345) >>> 0;
    buffer.writeUInt32LE(x, i <= size - 4 ? i : size - 4);
  }
  return buffer;
}
