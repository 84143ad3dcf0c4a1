// In charge of password hashing: argon2id (OWASP parameters) in libuv's thread pool, so hashing
// never blocks the event loop, every hash taking its turn in the process's one hash queue
// (hash-queue.ts), plus a decoy verify for unknown users so timing reveals nothing. bcrypt hashes
// imported from another system are verified too, and replaced by argon2id at the first sign-in
// that proves their password.
import { hash, verify } from '@node-rs/argon2';
import { verify as verifyBcrypt } from '@node-rs/bcrypt';
import type { HashCaller, HashQueue } from './hash-queue.js';

// Argon2id, m=19 MiB, t=2, p=1: the OWASP Password Storage Cheat Sheet baseline.
const OPTIONS = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

const ARGON2 = /^\$argon2(id|i|d)\$v=\d+\$m=\d+,t=\d+,p=\d+\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/;
// Modular crypt format: version, two-digit cost (4-31), 22 characters of salt and 31 of hash.
const BCRYPT = /^\$2[aby]\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;

/** Every hash and verify for a caller, each in its turn in the shared queue. */
export interface PasswordHasher {
  hash(caller: HashCaller, password: string): Promise<string>;
  verify(caller: HashCaller, storedHash: string, password: string): Promise<boolean>;
  /** Spends the same work as a real verify, for sign-ins naming an unknown e-mail. */
  verifyDecoy(caller: HashCaller, password: string): Promise<false>;
  readonly queue: HashQueue;
}

export function createPasswordHasher(queue: HashQueue): PasswordHasher {
  let decoyHash: Promise<string> | undefined;
  const verifyNow = async (storedHash: string, password: string): Promise<boolean> => {
    try {
      if (BCRYPT.test(storedHash)) return await verifyBcrypt(password, storedHash);
      return await verify(storedHash, password);
    } catch {
      return false; // unreadable hash: treat as a mismatch, never as a crash
    }
  };
  return {
    queue,
    hash: (caller, password) => queue.run(caller, () => hash(password, OPTIONS)),
    verify: (caller, storedHash, password) => queue.run(caller, () => verifyNow(storedHash, password)),
    async verifyDecoy(caller, password) {
      // Made once, as trusted work; a refusal (a full queue) is not remembered.
      decoyHash ??= queue
        .run({ key: 'service', trusted: true }, () => hash('tenantry-decoy-password', OPTIONS))
        .catch((error: unknown) => {
          decoyHash = undefined;
          throw error;
        });
      const stored = await decoyHash;
      await queue.run(caller, () => verifyNow(stored, password));
      return false;
    },
  };
}

/** A hash sign-in can verify: argon2 (ours, or imported) or bcrypt (imported). */
export function isVerifiableHash(storedHash: string): boolean {
  return ARGON2.test(storedHash) || BCRYPT.test(storedHash);
}

/** An imported bcrypt hash, to be replaced by argon2id once its password is known. */
export function isBcryptHash(storedHash: string): boolean {
  return BCRYPT.test(storedHash);
}
