// In charge of joining stored parts into one object, for resumable (TUS) uploads: each chunk a
// client sends is stored as an object of its own as it arrives, and the last one joins them
// under the object's key, streamed part after part, whole or not at all.
import { Readable } from 'node:stream';
import { NoSuchObject } from './keys.js';
import type { StorageBackend, StoredObject } from './types.js';

/**
 * Stores under `to` the bytes of the objects at `parts`, in order, within maxBytes. One part is
 * read at a time, so memory stays flat whatever the sizes; a missing part or a failed read fails
 * the put, which then stores nothing. The parts are left for the caller to delete once its own
 * record names the joined object.
 */
export async function assembleParts(
  backend: StorageBackend,
  parts: string[],
  to: string,
  options: { maxBytes?: number; contentType?: string },
): Promise<StoredObject> {
  async function* bytes(): AsyncGenerator<Buffer> {
    for (const part of parts) {
      const got = await backend.get(part);
      if (!got) throw new NoSuchObject('a part of the resumable upload is missing');
      for await (const chunk of got.stream) yield chunk as Buffer;
    }
  }
  return backend.put(to, Readable.from(bytes(), { objectMode: false }), options);
}
