// In charge of auth.oauth_states: what an authorization sent to a provider committed to (its
// state, kept as a SHA-256, its nonce and provider-side PKCE verifier, where the browser goes
// next, the client's own PKCE challenge, the user linking an identity and, for a link without
// PKCE, the hash of the cookie that binds it to its browser), taken back exactly once by the
// callback and only within its lifetime.
import { createHash } from 'node:crypto';
import type { Queryable } from '../../db/pool.js';
import type { PkceChallenge } from '../pkce.js';

/** How long a person may take at the provider before the callback is refused. */
export const OAUTH_STATE_TTL_SECONDS = 600;

export interface OAuthState {
  provider: string;
  codeVerifier: string;
  nonce: string;
  redirectTo: string;
  pkce: PkceChallenge | null;
  linkingUserId: string | null;
  /** SHA-256 of the secret cookie a linking flow without PKCE must bring back (migration 0049) */
  linkBindingHash: Buffer | null;
}

function hashState(state: string): Buffer {
  return createHash('sha256').update(state, 'utf8').digest();
}

export async function saveState(db: Queryable, state: string, value: OAuthState): Promise<void> {
  await db.query(
    `insert into auth.oauth_states (state_hash, provider, code_verifier, nonce, redirect_to,
       code_challenge, code_challenge_method, linking_user_id, link_binding_hash)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      hashState(state),
      value.provider,
      value.codeVerifier,
      value.nonce,
      value.redirectTo,
      value.pkce?.codeChallenge ?? null,
      value.pkce?.method ?? null,
      value.linkingUserId,
      value.linkBindingHash,
    ],
  );
  // Authorizations never completed are useless after their lifetime; prune them now and then.
  if (Math.random() < 0.02) {
    await db.query(`delete from auth.oauth_states where created_at < now() - make_interval(secs => $1)`, [
      OAUTH_STATE_TTL_SECONDS,
    ]);
  }
}

export type TakenState = { kind: 'found'; state: OAuthState } | { kind: 'expired' } | { kind: 'unknown' };

/** Removes the state and returns what it held: a state works once, and only while fresh. */
export async function takeState(db: Queryable, state: string): Promise<TakenState> {
  const result = await db.query<{
    provider: string;
    code_verifier: string;
    nonce: string;
    redirect_to: string;
    code_challenge: string | null;
    code_challenge_method: 's256' | 'plain' | null;
    linking_user_id: string | null;
    link_binding_hash: Buffer | null;
    expired: boolean;
  }>(
    `delete from auth.oauth_states where state_hash = $1
     returning provider, code_verifier, nonce, redirect_to, code_challenge, code_challenge_method,
       linking_user_id, link_binding_hash, created_at < now() - make_interval(secs => $2) as expired`,
    [hashState(state), OAUTH_STATE_TTL_SECONDS],
  );
  const row = result.rows[0];
  if (!row) return { kind: 'unknown' };
  if (row.expired) return { kind: 'expired' };
  return {
    kind: 'found',
    state: {
      provider: row.provider,
      codeVerifier: row.code_verifier,
      nonce: row.nonce,
      redirectTo: row.redirect_to,
      pkce:
        row.code_challenge && row.code_challenge_method
          ? { codeChallenge: row.code_challenge, method: row.code_challenge_method }
          : null,
      linkingUserId: row.linking_user_id,
      linkBindingHash: row.link_binding_hash,
    },
  };
}
