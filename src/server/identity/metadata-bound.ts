// In charge of the bound on a user's metadata (METADATA_MAX_BYTES): the database refuses any
// write of user_metadata or app_metadata over it (migration 0048); this module asks the same
// question ahead of flows that may write nothing, and turns the database's refusal into GoTrue's
// 400 validation_failed naming the field and the bound.
import type { Queryable } from '../db/pool.js';
import { HttpError } from '../http/errors.js';

/** The SQLSTATE internal.check_metadata_bound raises. */
const OVER_BOUND = 'TN413';

/**
 * Refuses metadata over the bound before anything is done with it, measured exactly as the
 * database measures what it stores. A sign-up or e-mail sign-in naming a registered address
 * writes nothing, so without this its answer would tell that address from a new one.
 */
export async function checkMetadataBound(
  db: Queryable,
  value: Record<string, unknown> | null | undefined,
  field: 'user_metadata' | 'app_metadata' = 'user_metadata',
): Promise<void> {
  if (!value || Object.keys(value).length === 0) return;
  try {
    await db.query('select internal.check_metadata_bound($1::jsonb, $2)', [JSON.stringify(value), field]);
  } catch (error) {
    throw metadataRefusal(error) ?? error;
  }
}

/** The 400 for the database's refusal of oversized metadata; null for any other error. */
export function metadataRefusal(error: unknown): HttpError | null {
  const e = error as { code?: unknown; detail?: unknown } | null;
  if (!e || typeof e !== 'object' || e.code !== OVER_BOUND) return null;
  let field = 'user_metadata';
  let max: number | null = null;
  try {
    const detail = JSON.parse(String(e.detail)) as { field?: unknown; max?: unknown };
    if (typeof detail.field === 'string') field = detail.field;
    if (typeof detail.max === 'number') max = detail.max;
  } catch {
    // The message below still says what was refused.
  }
  return new HttpError(
    400,
    `${field} is too large: at most ${max ?? 'the configured number of'} bytes of JSON (METADATA_MAX_BYTES)`,
    { code: 'validation_failed' },
  );
}
