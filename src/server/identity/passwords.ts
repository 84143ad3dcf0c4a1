// In charge of password hashing: argon2id (OWASP parameters) in libuv's thread pool, so hashing
// never blocks the event loop, plus a decoy verify for unknown users so timing reveals nothing.
import { hash, verify } from '@node-rs/argon2';

// Argon2id, m=19 MiB, t=2, p=1: the OWASP Password Storage Cheat Sheet baseline.
const OPTIONS = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

let decoyHash: Promise<string> | undefined;

export function hashPassword(password: string): Promise<string> {
  return hash(password, OPTIONS);
}

export async function verifyPassword(storedHash: string, password: string): Promise<boolean> {
  try {
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
