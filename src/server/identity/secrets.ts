// In charge of comparing secrets without leaking, through timing, how much of a guess was right.
import { createHash, timingSafeEqual } from 'node:crypto';

/** A fixed-size digest of a secret or of a guess, for constant-time comparison. */
export function secretDigest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant-time equality of a guess and a secret, each given with its digest (secretDigest). */
export function digestsEqual(
  given: string,
  givenDigest: Buffer,
  expected: string,
  expectedDigest: Buffer,
): boolean {
  return timingSafeEqual(givenDigest, expectedDigest) && given.length === expected.length;
}

/** Constant-time equality for strings of any length (both sides are hashed to a fixed size first). */
export function secretsEqual(given: string, expected: string): boolean {
  return digestsEqual(given, secretDigest(given), expected, secretDigest(expected));
}
