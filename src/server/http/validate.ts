// In charge of checking a parsed body against a zod schema at the edge, turning any mismatch
// into one clear 400 that names the offending field.
import type { z } from 'zod';
import { HttpError } from './errors.js';

export function parseWith<S extends z.ZodType>(
  schema: S,
  value: unknown,
  code = 'validation_failed',
): z.infer<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const first = result.error.issues[0];
  const where = first && first.path.length > 0 ? `${first.path.join('.')}: ` : '';
  throw new HttpError(400, `${where}${first?.message ?? 'invalid request body'}`, { code });
}
