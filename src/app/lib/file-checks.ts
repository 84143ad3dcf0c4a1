// In charge of checking a file against where it is headed, in words for the person sending it:
// the same rules the storage API applies (a bucket's types, its size limit, the plan's bytes
// left), run in the browser before a byte is sent and again by the server action that signs the
// upload. Storage still decides; this only makes the common refusals immediate and clear.

/** The limits an upload is held to. */
export interface UploadLimits {
  /** the most bytes the file may have (the smallest of the server's, the bucket's and the plan's room) */
  maxBytes: number;
  /** the plan's bytes left were the binding limit */
  planBound: boolean;
  /** allowed types (`image/*` for a family); null = any */
  types: string[] | null;
}

/** Whether a type is among the allowed ones, as storage reads them (parameters ignored, `a/*` families). */
export function typeAllowed(allowed: readonly string[] | null, type: string): boolean {
  if (!allowed || allowed.length === 0) return true;
  const bare = (type.split(';')[0] ?? '').trim().toLowerCase();
  const major = bare.split('/')[0];
  return allowed.some((a) => {
    const pattern = a.toLowerCase();
    return (
      pattern === bare || pattern === '*/*' || (pattern.endsWith('/*') && pattern.slice(0, -2) === major)
    );
  });
}

/** The refusal for a file of this size and type, or null when it may be sent. */
export function refusalFor(limits: UploadLimits, size: number, type: string): string | null {
  if (!typeAllowed(limits.types, type || 'application/octet-stream')) {
    return `Files of this type (${type || 'unknown'}) cannot be added here`;
  }
  if (size > limits.maxBytes) {
    return limits.planBound
      ? `The workspace's plan has ${formatBytes(limits.maxBytes)} of storage left; delete files or upgrade the plan`
      : `The file is larger than ${formatBytes(limits.maxBytes)}, the most a file here may be`;
  }
  return null;
}

const UNITS = ['bytes', 'KB', 'MB', 'GB', 'TB'];

/** 1536 -> "1.5 KB"; binary multiples, as the limits are set. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = unit === 0 || value >= 10 ? Math.round(value) : Math.round(value * 10) / 10;
  return `${shown} ${unit === 0 && shown === 1 ? 'byte' : UNITS[unit]}`;
}
