// In charge of the contract every place that keeps stored files' bytes fulfils (local disk, S3):
// what a backend promises the storage API about visibility, limits, ranges and failures.

export interface StoredObject {
  size: number;
  etag: string;
  contentType?: string;
  lastModified: Date;
}

export interface StorageBackend {
  /** streams body into key; resolves only when the whole object is durably stored and visible;
      rejects (storing nothing) when body errors or exceeds maxBytes (ObjectTooLarge) */
  put(
    key: string,
    body: NodeJS.ReadableStream,
    options: { maxBytes?: number; contentType?: string },
  ): Promise<StoredObject>;
  /** a readable stream of the object (optionally a byte range, inclusive end), or null if absent */
  get(
    key: string,
    range?: { start: number; end?: number },
  ): Promise<{ stream: NodeJS.ReadableStream; object: StoredObject } | null>;
  head(key: string): Promise<StoredObject | null>;
  copy(from: string, to: string): Promise<StoredObject>;
  delete(keys: string[]): Promise<void>;
}

export class ObjectTooLarge extends Error {}
