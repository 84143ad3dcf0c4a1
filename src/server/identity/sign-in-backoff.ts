// In charge of slowing down password guessing without letting a stranger lock an owner out:
// failures are counted per (e-mail, client address) with exponential backoff, and per e-mail
// across addresses only to slow every guesser further, never to refuse a clean address
// (docs/decisions/0009). The state lives in Postgres (internal.sign_in_failures), so it holds
// across instances, and the check is folded into the user lookup: one round trip per attempt.
import type { Queryable } from '../db/pool.js';
import type { RateLimits } from '../config.js';
import { SELECT_USER, type UserWithIdentities } from './users.js';

/** Failures are forgotten a day after an address's (or an e-mail's) last attempt. */
export const FAILURE_MEMORY_SECONDS = 24 * 3600;

export type SignInAttempt =
  { kind: 'wait'; retryAfterSeconds: number } | { kind: 'go'; user: UserWithIdentities | null };

// Rows are keyed by the address as text; anything longer than an IPv6 address is not one, and a
// bounded key keeps a hostile value from reaching the index limits.
export function signInAddressKey(address: string | null): string {
  return (address ?? '').slice(0, 100);
}

const BEGIN_SIGN_IN = `select a.retry_after, u.*
  from internal.begin_password_sign_in($1, $2, $3, $4, $5, $6, $7, $8, $9) as a(retry_after)
  left join lateral (${SELECT_USER} where u.email = $1 and a.retry_after is null) u on true`;

/**
 * Counts the attempt (per-address attempt limit, then this address's failures for the e-mail)
 * and, unless the address must wait, returns the user the e-mail names (null when unknown), all
 * in one statement. The attempt stays counted as a failure until `passwordWasRight` or the
 * session statement (openSession with `signedInWith`) takes it back.
 */
export async function beginPasswordSignIn(
  db: Queryable,
  email: string,
  address: string | null,
  limits: RateLimits,
): Promise<SignInAttempt> {
  // A prepared statement: parsed and planned once per connection (planning the user's JSON
  // subqueries cost more than running them).
  const result = await db.query<UserWithIdentities & { retry_after: number | null; id: string | null }>({
    name: 'internal.begin_password_sign_in',
    text: BEGIN_SIGN_IN,
    values: [
      email,
      signInAddressKey(address),
      limits.windowSeconds,
      limits.signInPerAddress,
      limits.signInFailuresPerAddress,
      limits.signInFailuresPerEmail,
      limits.signInBackoffSeconds,
      limits.signInBackoffMaxSeconds,
      FAILURE_MEMORY_SECONDS,
    ],
  });
  const row = result.rows[0]!;
  if (row.retry_after !== null) return { kind: 'wait', retryAfterSeconds: row.retry_after };
  if (row.id === null) return { kind: 'go', user: null };
  const { retry_after: _, ...user } = row;
  return { kind: 'go', user: user as UserWithIdentities };
}

/** Takes the attempt back when the password was right but no session follows (banned, unconfirmed). */
export async function passwordWasRight(db: Queryable, email: string, address: string | null): Promise<void> {
  await db.query('select internal.password_sign_in_succeeded($1, $2)', [email, signInAddressKey(address)]);
}
