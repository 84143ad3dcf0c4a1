// In charge of reading a token request (POST /oauth/token) and authenticating the OAuth client that
// sends it, by the method the client registered: client_secret_basic (HTTP Basic), client_secret_post
// (the secret in the body) or none (a public client, proven by PKCE alone). Secrets are compared
// as SHA-256 digests in constant time; every failure is RFC 6749's 401 invalid_client.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Pool } from '../../db/pool.js';
import { readBodyBytes } from '../../http/body.js';
import { authError } from '../errors.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TOKEN_BODY_MAX = 16 * 1024;

/** RFC 6749's token errors; the body carries `error` and `error_description` (errors.ts). */
export const tokenErrors = {
  invalidRequest: (message: string) => authError(400, 'invalid_request', message),
  invalidGrant: (message: string) => authError(400, 'invalid_grant', message),
  unauthorizedClient: (message: string) => authError(400, 'unauthorized_client', message),
  unsupportedGrant: () =>
    authError(400, 'unsupported_grant_type', 'grant_type must be authorization_code or refresh_token'),
  // a client that tried HTTP Basic is told which scheme to use again (RFC 6749 §5.2)
  invalidClient: (basic: boolean) =>
    authError(
      401,
      'invalid_client',
      'Client authentication failed',
      basic ? { 'www-authenticate': 'Basic realm="oauth"' } : undefined,
    ),
};

/**
 * The form of a token request: application/x-www-form-urlencoded as RFC 6749 says, or a JSON
 * object of strings (GoTrue reads both). A parameter given twice is refused (RFC 6749 §3.2).
 */
export async function readTokenRequest(request: Request): Promise<Map<string, string>> {
  const bytes = await readBodyBytes(request, TOKEN_BODY_MAX);
  const text = Buffer.from(bytes).toString('utf8');
  const params = new Map<string, string>();
  const add = (key: string, value: unknown) => {
    if (typeof value !== 'string') throw tokenErrors.invalidRequest(`${key} must be a string`);
    if (params.has(key)) throw tokenErrors.invalidRequest(`${key} must not be repeated`);
    params.set(key, value);
  };
  if ((request.headers.get('content-type') ?? '').toLowerCase().includes('json')) {
    let body: unknown;
    try {
      body = text.trim() === '' ? {} : JSON.parse(text);
    } catch {
      throw tokenErrors.invalidRequest('the body is not valid JSON');
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw tokenErrors.invalidRequest('the body must be an object');
    }
    for (const [key, value] of Object.entries(body)) add(key, value);
  } else {
    for (const [key, value] of new URLSearchParams(text)) add(key, value);
  }
  return params;
}

export interface AuthenticatedClient {
  id: string;
  grantTypes: string[];
}

interface ClientSecretRow {
  id: string;
  token_endpoint_auth_method: 'none' | 'client_secret_basic' | 'client_secret_post';
  client_secret_hash: Buffer | null;
  grant_types: string[];
}

function basicCredentials(header: string | null): { id: string; secret: string } | null {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  try {
    // RFC 6749 §2.3.1: both halves are form-encoded before they are joined
    const unform = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: unform(decoded.slice(0, colon)), secret: unform(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

function digest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** The client behind a token request, proven by its registered method, or 401 invalid_client. */
export async function authenticateClient(
  pool: Pool,
  authorization: string | null,
  params: Map<string, string>,
): Promise<AuthenticatedClient> {
  const usedBasic = /^Basic\s/i.test(authorization ?? '');
  const basic = usedBasic ? basicCredentials(authorization) : null;
  if (usedBasic && !basic) throw tokenErrors.invalidClient(true);
  const bodySecret = params.get('client_secret');
  // one way of authenticating per request (RFC 6749 §2.3)
  if (basic && bodySecret !== undefined) {
    throw tokenErrors.invalidRequest('client credentials must be sent one way only');
  }
  const bodyId = params.get('client_id');
  if (basic && bodyId !== undefined && bodyId !== basic.id) throw tokenErrors.invalidClient(true);
  const id = basic?.id ?? bodyId ?? '';
  const presented = basic?.secret ?? bodySecret ?? null;
  if (!UUID.test(id)) throw tokenErrors.invalidClient(usedBasic);
  const { rows } = await pool.query<ClientSecretRow>(
    `select id, token_endpoint_auth_method, client_secret_hash, grant_types
      from auth.oauth_clients where id = $1 and deleted_at is null`,
    [id.toLowerCase()],
  );
  const client = rows[0];
  // the digest is taken whether or not the client exists, so timing tells no client ids apart
  const presentedDigest = digest(presented ?? '');
  if (!client) throw tokenErrors.invalidClient(usedBasic);
  const method = client.token_endpoint_auth_method;
  if (method === 'none') {
    // a public client has no secret: one presented means the caller is confused or guessing
    if (presented !== null) throw tokenErrors.invalidClient(usedBasic);
  } else {
    const rightWay = method === 'client_secret_basic' ? basic !== null : bodySecret !== undefined;
    const stored = client.client_secret_hash;
    const matches = stored !== null && timingSafeEqual(presentedDigest, stored);
    if (!rightWay || presented === null || !matches) throw tokenErrors.invalidClient(usedBasic);
  }
  return { id: client.id, grantTypes: client.grant_types };
}
