// In charge of POST /oauth/token's two grants for an authenticated OAuth client (decision 0093):
// authorization_code (the one-time code for a session of the client's own, after the PKCE
// verifier answers the challenge) and refresh_token (the session's rotation, with the reuse
// detection every refresh has). The access token is the user's ordinary Tenantry JWT, so row-level
// security treats the client exactly as the user, plus GoTrue's client_id claim.
import { createHash, timingSafeEqual } from 'node:crypto';
import { withService } from '../../db/transactions.js';
import { recordAccountEvent } from '../audit.js';
import { errors } from '../errors.js';
import { tokenResponse, type IdentityDeps, type RequestContext } from '../flows/context.js';
import { refreshOptions } from '../flows/token-grants.js';
import { openSession, refreshGrantInOneCall, type SessionRef } from '../sessions.js';
import { sessionOfRefreshToken } from '../refresh-tokens.js';
import { findUserById, isBanned, type UserWithIdentities } from '../users.js';
import { codeDigest } from './authorizations.js';
import { tokenErrors, type AuthenticatedClient } from './client-auth.js';

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** RFC 6749 §5.1's answer (GoTrue leaves the user out for OAuth clients). */
export interface ClientTokenResponse {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  refresh_token: string;
}

/** The user's ordinary token response on the client's session, in RFC 6749's shape. */
async function tokensFor(
  deps: IdentityDeps,
  user: UserWithIdentities,
  session: SessionRef,
  clientId: string,
): Promise<ClientTokenResponse> {
  const issued = await tokenResponse(deps, user, { ...session, oauthClientId: clientId });
  return {
    access_token: issued.access_token,
    token_type: 'bearer',
    expires_in: issued.expires_in,
    refresh_token: issued.refresh_token,
  };
}

function s256(verifier: string): Buffer {
  return createHash('sha256').update(verifier, 'ascii').digest();
}

interface CodeRow {
  id: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  code_challenge: string;
  code_expired: boolean;
  code_used: boolean;
  session_id: string | null;
  consented: boolean;
}

type Exchange =
  | { kind: 'issued'; tokens: ClientTokenResponse }
  | { kind: 'refused'; error: ReturnType<typeof tokenErrors.invalidGrant> };

/**
 * grant_type=authorization_code. The code row is locked for the exchange, so two concurrent
 * exchanges cannot both win. A code presented again ends the session its first exchange opened
 * (OAuth 2.1 §4.1.3); a wrong verifier uses the code up. Those refusals commit their change, so
 * they are returned from the transaction and thrown after it.
 */
export async function exchangeCode(
  deps: IdentityDeps,
  client: AuthenticatedClient,
  params: Map<string, string>,
  context: RequestContext,
): Promise<ClientTokenResponse> {
  const code = params.get('code') ?? '';
  const verifier = params.get('code_verifier') ?? '';
  const redirectUri = params.get('redirect_uri');
  if (!code) throw tokenErrors.invalidRequest('code is required');
  if (!verifier) throw tokenErrors.invalidRequest('code_verifier is required');
  if (!VERIFIER.test(verifier)) {
    throw tokenErrors.invalidRequest('code_verifier must be 43 to 128 unreserved characters');
  }
  const outcome = await withService<Exchange>(deps.pool, async (tx) => {
    const { rows } = await tx.query<CodeRow>(
      `select a.id, a.client_id, a.user_id, a.redirect_uri, a.code_challenge, a.session_id,
          a.code_expires_at <= now() as code_expired, a.code_used_at is not null as code_used,
          -- the consent the code was approved under: a later one, after a revocation, does not revive it
          exists (select 1 from auth.oauth_consents g where g.user_id = a.user_id
            and g.client_id = a.client_id and g.revoked_at is null and g.granted_at <= a.decided_at)
            as consented
        from auth.oauth_authorizations a
        where a.code_hash = $1 and a.status = 'approved'
        for update`,
      [codeDigest(code)],
    );
    const row = rows[0];
    const refused = (message: string): Exchange => ({
      kind: 'refused',
      error: tokenErrors.invalidGrant(message),
    });
    // another client's code is refused without touching it: its owner may still redeem it
    if (!row || row.client_id !== client.id) return refused('Invalid authorization code');
    if (row.code_used) {
      const ended = row.session_id
        ? await tx.query('delete from auth.sessions where id = $1', [row.session_id])
        : null;
      await recordAccountEvent(tx, {
        action: 'oauth_code_reused',
        userId: row.user_id,
        actor: { type: 'anonymous' },
        target: { type: 'oauth_client', id: client.id },
        details: { session_ended: (ended?.rowCount ?? 0) > 0 },
      });
      return refused('Authorization code has already been used');
    }
    // used up from here on, whatever follows
    await tx.query('update auth.oauth_authorizations set code_used_at = now() where id = $1', [row.id]);
    if (row.code_expired) return refused('Authorization code has expired');
    if (redirectUri !== undefined && redirectUri !== row.redirect_uri) {
      return refused('redirect_uri does not match the authorization request');
    }
    const expected = Buffer.from(row.code_challenge, 'utf8');
    const derived = Buffer.from(s256(verifier).toString('base64url'), 'utf8');
    if (expected.length !== derived.length || !timingSafeEqual(expected, derived)) {
      return refused('code_verifier does not match the code_challenge');
    }
    if (!row.consented) return refused('The user has revoked access for this client');
    const user = await findUserById(tx, row.user_id);
    if (!user || isBanned(user)) return refused('The user cannot be signed in');
    const session = await openSession(tx, user.id, 'oauth_authorization_code', context);
    await tx.query('update auth.sessions set oauth_client_id = $2 where id = $1', [
      session.sessionId,
      client.id,
    ]);
    await tx.query('update auth.oauth_authorizations set session_id = $2 where id = $1', [
      row.id,
      session.sessionId,
    ]);
    await recordAccountEvent(tx, {
      action: 'oauth_token_issued',
      userId: user.id,
      actor: { type: 'anonymous' },
      target: { type: 'oauth_client', id: client.id },
      details: { grant_type: 'authorization_code', session_id: session.sessionId },
      context,
    });
    return { kind: 'issued', tokens: await tokensFor(deps, user, session, client.id) };
  });
  if (outcome.kind === 'refused') throw outcome.error;
  return outcome.tokens;
}

/**
 * grant_type=refresh_token for a client: only a token of a session issued to this very client is
 * taken (checked before anything rotates), then the ordinary rotation runs, reuse ending the session.
 */
export async function refreshForClient(
  deps: IdentityDeps,
  client: AuthenticatedClient,
  params: Map<string, string>,
  context: RequestContext,
): Promise<ClientTokenResponse> {
  const presented = params.get('refresh_token') ?? '';
  if (!presented) throw tokenErrors.invalidRequest('refresh_token is required');
  const sessionId = sessionOfRefreshToken(presented);
  if (!sessionId) throw tokenErrors.invalidGrant('Invalid refresh token');
  const owner = await deps.pool.query<{ oauth_client_id: string | null }>(
    'select oauth_client_id from auth.sessions where id = $1',
    [sessionId],
  );
  // checked before rotating: another client's (or a person's own) session is left untouched
  if (owner.rows[0]?.oauth_client_id !== client.id) throw tokenErrors.invalidGrant('Invalid refresh token');
  const outcome = await refreshGrantInOneCall(
    deps.pool,
    deps.refreshKey,
    presented,
    refreshOptions(deps.settings),
    context.ip,
  );
  switch (outcome.kind) {
    case 'granted':
      return tokensFor(deps, outcome.user, outcome.session, client.id);
    case 'rate_limited':
      throw errors.rateLimited(outcome.retryAfterSeconds);
    case 'reuse_detected':
      throw tokenErrors.invalidGrant('Refresh token has already been used; the session has ended');
    case 'expired':
      throw tokenErrors.invalidGrant('Refresh token has expired');
    default:
      throw tokenErrors.invalidGrant('Invalid refresh token');
  }
}
