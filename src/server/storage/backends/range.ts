// In charge of turning a requested byte range into the bytes of one object a backend serves, the
// same way for every backend: inclusive end, clamped to the object, empty past its end.
import { Transform, type TransformCallback } from 'node:stream';

/** The inclusive [start, end] a backend serves, or null when nothing (empty object, start past the end). */
export function servedRange(
  range: { start: number; end?: number } | undefined,
  size: number,
): { start: number; end: number } | null {
  const start = range?.start ?? 0;
  const end = Math.min(range?.end ?? size - 1, size - 1);
  if (!Number.isSafeInteger(start) || start < 0)
    throw new RangeError('range start must be a non-negative integer');
  if (range?.end !== undefined && (!Number.isSafeInteger(range.end) || range.end < start)) {
    throw new RangeError('range end must be an integer not below its start');
  }
  return start > end ? null : { start, end };
}

/**
 * Passes on length bytes after skipping skip: for a server that answered more than the range
 * asked (some S3-compatible servers ignore a range, or read "bytes=0-0" as the whole object).
 */
export class ByteWindow extends Transform {
  constructor(
    private skip: number,
    private left: number,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
    let bytes = chunk;
    if (this.skip > 0) {
      const skipped = Math.min(this.skip, bytes.length);
      this.skip -= skipped;
      bytes = bytes.subarray(skipped);
    }
    if (this.left > 0 && bytes.length > 0) {
      const kept = bytes.subarray(0, this.left);
      this.left -= kept.length;
      this.push(kept);
    }
    callback();
  }
}
