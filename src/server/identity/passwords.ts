// In charge of password hashing: argon2id (OWASP parameters) in libuv's thread pool, so hashing
// never blocks the event loop, plus a decoy verify for unknown users so timing reveals nothing.
// bcrypt hashes imported from another system are verified too, and replaced by argon2id at the
// first sign-in that proves their password.
import { hash, verify } from '@node-rs/argon2';
import { verify as verifyBcrypt } from '@node-rs/bcrypt';

// Argon2id, m=19 MiB, t=2, p=1: the OWASP Password Storage Cheat Sheet baseline.
const OPTIONS = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

const ARGON2 = /^\$argon2(id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/;
// Modular crypt format: version, two-digit cost (4-31), 22 characters of salt and 31 of hash.
const BCRYPT = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;

let decoyHash: Promise<string> | undefined;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

/** A hash sign-in can verify: argon2 (ours, or imported) or bcrypt (imported). */
export function isVerifiableHash(storedHash: string): boolean {
  return ARGON2.test(storedHash) || BCRYPT.test(storedHash);
}

/** An imported bcrypt hash, to be replaced by argon2id once its password is known. */
export function isBcryptHash(storedHash: string): boolean {
  return BCRYPT.test(storedHash);
}

export async function verifyPassword(storedHash: string, password: string): Promise<boolean> {
  try {
    if (BCRYPT.test(storedHash)) return await verifyBcrypt(password, storedHash);
    return await verify(storedHash, password);
  } catch {
    return false; // unreadable hash: treat as a mismatch, never as a crash
  }
}

/** Spends the same work as a real verify, for sign-ins naming an unknown e-mail. */
export async function verifyDecoy(password: string): Promise<false> {
  decoyHash ??= hashPassword('tenantry-decoy-password');
  await verifyPassword(await decoyHash, password);
  return false;
}
