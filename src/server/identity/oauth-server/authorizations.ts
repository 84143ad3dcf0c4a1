// In charge of the OAuth 2.1 server's authorization requests (decision 0093): GET /oauth/authorize
// checks a client's request and records it for the consent page; the signed-in user reads it
// (GET /oauth/authorizations/:id, answered with the redirect at once when an earlier consent
// covers it) and approves or denies it (POST .../consent). Approval sets a one-time code bound to
// the client, the redirect URI, the user and the PKCE challenge, kept only as its digest.
import { createHash, randomBytes } from 'node:crypto';
import type { Pool } from '../../db/pool.js';
import { withService, type Tx } from '../../db/transactions.js';
import { recordAccountEvent, type AccountAction } from '../audit.js';
import { authError, errors } from '../errors.js';
import { enforceLimits } from '../rate-limit.js';

/** How long a request waits for the user's answer, and a code for its exchange (GoTrue's ten minutes). */
export const AUTHORIZATION_TTL_SECONDS = 600;
export const CODE_TTL_SECONDS = 300;
/** What a request without `scope` asks for (GoTrue's default scope). */
export const DEFAULT_SCOPE = 'email';
export const SUPPORTED_SCOPES = ['openid', 'email', 'profile', 'phone'] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// RFC 6749 §3.3: scope tokens are printable ASCII but space, double quote and backslash
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const CHALLENGE = /^[A-Za-z0-9._~-]{43,128}$/;
const TEXT_MAX = 1024;

export const authorizationNotFound = () =>
  authError(404, 'oauth_authorization_not_found', 'authorization not found');

/** The query of GET /oauth/authorize. */
export interface AuthorizeQuery {
  client_id?: string;
  redirect_uri?: string;
  response_type?: string;
  scope?: string;
  state?: string;
  code_challenge?: string;
  code_challenge_method?: string;
}

/**
 * Where GET /oauth/authorize sends the browser: the consent page, or the client's redirect URI
 * with an error. Until the client and its redirect URI are known good the error is thrown (shown
 * to the person, never redirected: an unchecked redirect_uri would make this an open redirect).
 */
export async function startAuthorization(
  pool: Pool,
  consentPageUrl: string,
  query: AuthorizeQuery,
  limit: { ip: string | null; max: number; windowSeconds: number },
): Promise<string> {
  const clientId = query.client_id ?? '';
  const redirectUri = query.redirect_uri ?? '';
  if (!clientId) throw errors.validation('client_id is required');
  if (!redirectUri) throw errors.validation('redirect_uri is required');
  // Anyone may start a request without signing in, and each one is a row: counted per address
  // against the sign-in limit, as provider sign-ins started at /authorize are.
  if (limit.ip) {
    await enforceLimits(pool, [
      { bucket: `oauth-authorize:ip:${limit.ip}`, max: limit.max, windowSeconds: limit.windowSeconds },
    ]);
  }
  if (!UUID.test(clientId)) throw authError(400, 'oauth_client_not_found', 'invalid client_id');
  const client = await pool.query<{ redirect_uris: string[]; grant_types: string[] }>(
    'select redirect_uris, grant_types from auth.oauth_clients where id = $1 and deleted_at is null',
    [clientId.toLowerCase()],
  );
  const row = client.rows[0];
  if (!row) throw authError(400, 'oauth_client_not_found', 'invalid client_id');
  // exact string comparison, as OAuth 2.1 requires (no prefix or pattern matching)
  if (!row.redirect_uris.includes(redirectUri)) throw errors.validation('invalid redirect_uri');

  // From here the redirect URI is the client's own: problems go back to it, with the state.
  const state = query.state ?? '';
  const refuse = (error: string, description: string) =>
    errorRedirect(redirectUri, error, description, state);
  if (state.length > TEXT_MAX) return refuse('invalid_request', 'state is too long');
  const responseType = query.response_type || 'code';
  if (responseType !== 'code') {
    return refuse('unsupported_response_type', 'Only response_type=code is supported');
  }
  if (!row.grant_types.includes('authorization_code')) {
    return refuse('unauthorized_client', 'The client may not use the authorization code grant');
  }
  const challenge = query.code_challenge ?? '';
  const method = query.code_challenge_method ?? '';
  if (!challenge) return refuse('invalid_request', 'code_challenge is required (PKCE)');
  if (method !== 'S256') {
    // OAuth 2.1 refuses plain: a challenge anyone on the way can read proves nothing
    return refuse('invalid_request', "code_challenge_method must be 'S256'");
  }
  if (!CHALLENGE.test(challenge)) {
    return refuse('invalid_request', 'code_challenge must be 43 to 128 unreserved characters');
  }
  const scope = normalizeScope(query.scope);
  if (scope === null) return refuse('invalid_scope', 'scope is malformed');

  const { rows } = await pool.query<{ id: string }>(
    `with swept as (
       -- requests long past their expiry (a day, so a replayed code is still recognised meanwhile)
       delete from auth.oauth_authorizations where id in (
         select id from auth.oauth_authorizations where expires_at < now() - interval '1 day' limit 100)
     )
     insert into auth.oauth_authorizations (client_id, redirect_uri, scope, state, code_challenge, expires_at)
     values ($1, $2, $3, nullif($4, ''), $5, now() + make_interval(secs => $6))
     returning id`,
    [clientId.toLowerCase(), redirectUri, scope, state, challenge, AUTHORIZATION_TTL_SECONDS],
  );
  const page = new URL(consentPageUrl);
  page.searchParams.set('authorization_id', rows[0]!.id);
  return page.toString();
}

/** The requested scopes, deduplicated and space-separated; null when malformed. */
function normalizeScope(raw: string | undefined): string | null {
  const tokens = (raw ?? '').split(' ').filter((t) => t !== '');
  if (tokens.length === 0) return DEFAULT_SCOPE;
  if (tokens.length > 64 || !tokens.every((t) => SCOPE_TOKEN.test(t))) return null;
  const scope = [...new Set(tokens)].join(' ');
  return scope.length > TEXT_MAX ? null : scope;
}

export function scopeList(scope: string): string[] {
  return scope.split(' ').filter((s) => s !== '');
}

function errorRedirect(redirectUri: string, error: string, description: string, state: string): string {
  const url = new URL(redirectUri);
  url.searchParams.set('error', error);
  url.searchParams.set('error_description', description);
  if (state) url.searchParams.set('state', state);
  return url.toString();
}

function codeRedirect(redirectUri: string, code: string, state: string | null): string {
  const url = new URL(redirectUri);
  url.searchParams.set('code', code);
  if (state) url.searchParams.set('state', state);
  return url.toString();
}

export function codeDigest(code: string): Buffer {
  return createHash('sha256').update(code, 'utf8').digest();
}

/** The person answering: from a user access token (never one issued to an OAuth client). */
export interface Approver {
  userId: string;
  email: string;
}

interface AuthorizationRow {
  id: string;
  client_id: string;
  user_id: string | null;
  redirect_uri: string;
  scope: string;
  state: string | null;
  status: 'pending' | 'approved' | 'denied';
  expired: boolean;
  client_name: string | null;
  client_uri: string | null;
  logo_uri: string | null;
}

/** A client as the consent page and the grants list show it (GoTrue's ClientDetailsResponse). */
export function clientDetails(row: {
  client_id: string;
  client_name: string | null;
  client_uri: string | null;
  logo_uri: string | null;
}) {
  return {
    id: row.client_id,
    name: row.client_name ?? '',
    uri: row.client_uri ?? '',
    logo_uri: row.logo_uri ?? '',
  };
}

/** The request, locked, with GoTrue's refusals: unknown or expired is 404, answered is 400. */
async function pendingAuthorization(tx: Tx, id: string): Promise<AuthorizationRow> {
  if (!UUID.test(id)) throw authorizationNotFound();
  const { rows } = await tx.query<AuthorizationRow>(
    `select a.id, a.client_id, a.user_id, a.redirect_uri, a.scope, a.state, a.status,
        a.expires_at <= now() as expired, c.client_name, c.client_uri, c.logo_uri
      from auth.oauth_authorizations a
      join auth.oauth_clients c on c.id = a.client_id and c.deleted_at is null
      where a.id = $1
      for update of a`,
    [id.toLowerCase()],
  );
  const row = rows[0];
  // an expired request is not found either: nothing said about whether it existed
  if (!row || row.expired) throw authorizationNotFound();
  if (row.status !== 'pending') throw errors.validation('authorization request cannot be processed');
  return row;
}

function audit(tx: Tx, action: AccountAction, userId: string, clientId: string, details: object) {
  return recordAccountEvent(tx, {
    action,
    userId,
    target: { type: 'oauth_client', id: clientId },
    details: { ...details },
  });
}

/** Approves: the code is set (its digest kept), the consent stored, and the redirect made. */
async function approve(tx: Tx, row: AuthorizationRow, userId: string, automatic: boolean): Promise<string> {
  const code = randomBytes(32).toString('base64url');
  await tx.query(
    `update auth.oauth_authorizations set status = 'approved', code_hash = $2, decided_at = now(),
        code_expires_at = now() + make_interval(secs => $3)
      where id = $1`,
    [row.id, codeDigest(code), CODE_TTL_SECONDS],
  );
  const scopes = scopeList(row.scope);
  // A standing consent widens with each approval; a revoked one comes back with these scopes only.
  await tx.query(
    `insert into auth.oauth_consents (user_id, client_id, scopes) values ($1, $2, $3)
      on conflict (user_id, client_id) do update set
        scopes = case when auth.oauth_consents.revoked_at is null
          then array(select distinct s from unnest(auth.oauth_consents.scopes || excluded.scopes) s order by s)
          else excluded.scopes end,
        granted_at = case when auth.oauth_consents.revoked_at is null
          then auth.oauth_consents.granted_at else now() end,
        revoked_at = null`,
    [userId, row.client_id, scopes],
  );
  await audit(tx, 'oauth_authorization_approved', userId, row.client_id, {
    scopes,
    ...(automatic ? { automatic: true } : {}),
  });
  return codeRedirect(row.redirect_uri, code, row.state);
}

export type AuthorizationAnswer =
  | {
      authorization_id: string;
      redirect_uri: string;
      client: ReturnType<typeof clientDetails>;
      user: { id: string; email: string };
      scope: string;
    }
  | { redirect_url: string };

/**
 * What the consent page shows. The first signed-in reader becomes the request's user; when their
 * standing consent already covers every scope asked, the request is approved at once and the
 * answer is the redirect (as GoTrue answers it). Anyone else is told it does not exist.
 */
export async function authorizationDetails(
  pool: Pool,
  id: string,
  approver: Approver,
): Promise<AuthorizationAnswer> {
  return withService(pool, async (tx) => {
    const row = await pendingAuthorization(tx, id);
    if (row.user_id === null) {
      await tx.query('update auth.oauth_authorizations set user_id = $2 where id = $1', [
        row.id,
        approver.userId,
      ]);
      const consent = await tx.query<{ scopes: string[] }>(
        `select scopes from auth.oauth_consents
          where user_id = $1 and client_id = $2 and revoked_at is null`,
        [approver.userId, row.client_id],
      );
      const granted = consent.rows[0]?.scopes;
      if (granted && scopeList(row.scope).every((s) => granted.includes(s))) {
        return { redirect_url: await approve(tx, row, approver.userId, true) };
      }
    } else if (row.user_id !== approver.userId) {
      throw authorizationNotFound();
    }
    return {
      authorization_id: row.id,
      redirect_uri: row.redirect_uri,
      client: clientDetails(row),
      user: { id: approver.userId, email: approver.email },
      scope: row.scope,
    };
  });
}

/** POST /oauth/authorizations/:id/consent: the user's answer, as the URL to send the browser to. */
export async function decideAuthorization(
  pool: Pool,
  id: string,
  approver: Approver,
  action: string | undefined,
): Promise<{ redirect_url: string }> {
  if (action !== 'approve' && action !== 'deny') {
    throw errors.validation("action must be 'approve' or 'deny'");
  }
  return withService(pool, async (tx) => {
    const row = await pendingAuthorization(tx, id);
    // only the user who opened the request may answer it (GoTrue's ownership check)
    if (row.user_id !== approver.userId) throw authorizationNotFound();
    if (action === 'approve') return { redirect_url: await approve(tx, row, approver.userId, false) };
    await tx.query(
      `update auth.oauth_authorizations set status = 'denied', decided_at = now() where id = $1`,
      [row.id],
    );
    await audit(tx, 'oauth_authorization_denied', approver.userId, row.client_id, {});
    return {
      redirect_url: errorRedirect(
        row.redirect_uri,
        'access_denied',
        'User denied the request',
        row.state ?? '',
      ),
    };
  });
}
