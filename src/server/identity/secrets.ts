// In charge of comparing secrets without leaking, through timing, how much of a guess was right.
import { createHash, timingSafeEqual } from 'node:crypto';

/** Constant-time equality for strings of any length (both sides are hashed to a fixed size first). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b) && given.length === expected.length;
}
