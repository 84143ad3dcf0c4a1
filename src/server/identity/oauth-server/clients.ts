// In charge of the clients of Tenantry's OAuth 2.1 authorization server (/admin/oauth/clients,
// GoTrue's OAuth client admin API): the rules a client's registration must follow, storing it
// with its secret kept only as a digest, and what the API shows of it. Every change writes its
// audit line in the same transaction. The route has already checked that the caller is the
// service role.
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { recordAccountEvent, type AccountAction } from '../audit.js';
import { withService, type Tx } from '../../db/transactions.js';
import type { OAuthServerConfig } from '../../config.js';
import type { Pool } from '../../db/pool.js';
import { authError, errors } from '../errors.js';

export const CLIENT_TYPES = ['public', 'confidential'] as const;
export const AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
export const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;
type ClientType = (typeof CLIENT_TYPES)[number];
type AuthMethod = (typeof AUTH_METHODS)[number];

// GoTrue's caps on a client's texts (internal/api/oauthserver/service.go), format rules rather
// than tunable limits: an operator gains nothing from a longer name.
const NAME_MAX = 1024;
const URI_MAX = 2048;

const text = (field: string) => z.string({ error: `${field} must be a string` });
const list = (field: string) => z.array(text(field), { error: `${field} must be an array of strings` });

export const createClientBody = z.object({
  client_name: text('client_name').optional(),
  client_uri: text('client_uri').optional(),
  logo_uri: text('logo_uri').optional(),
  redirect_uris: list('redirect_uris').optional(),
  grant_types: list('grant_types').optional(),
  // auth-js sends response_types; OAuth 2.1 has only "code", so anything else is refused
  response_types: list('response_types').optional(),
  scope: text('scope').optional(),
  client_type: text('client_type').optional(),
  token_endpoint_auth_method: text('token_endpoint_auth_method').optional(),
});
export type CreateClientBody = z.infer<typeof createClientBody>;

export const updateClientBody = z.object({
  client_name: text('client_name').optional(),
  client_uri: text('client_uri').optional(),
  logo_uri: text('logo_uri').optional(),
  redirect_uris: list('redirect_uris').optional(),
  grant_types: list('grant_types').optional(),
  token_endpoint_auth_method: text('token_endpoint_auth_method').optional(),
});
export type UpdateClientBody = z.infer<typeof updateClientBody>;

interface ClientRow {
  id: string;
  client_type: ClientType;
  token_endpoint_auth_method: AuthMethod;
  registration_type: 'manual' | 'dynamic';
  redirect_uris: string[];
  grant_types: string[];
  client_name: string | null;
  client_uri: string | null;
  logo_uri: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, client_type, token_endpoint_auth_method, registration_type, redirect_uris, grant_types,
  client_name, client_uri, logo_uri, created_at, updated_at`;

/** A client as GoTrue answers it: empty texts left out, the secret only where the caller adds it. */
export function renderClient(row: ClientRow, secret?: string): Record<string, unknown> {
  return {
    client_id: row.id,
    ...(secret !== undefined ? { client_secret: secret } : {}),
    client_type: row.client_type,
    token_endpoint_auth_method: row.token_endpoint_auth_method,
    registration_type: row.registration_type,
    redirect_uris: row.redirect_uris,
    grant_types: row.grant_types,
    response_types: ['code'],
    ...(row.client_name ? { client_name: row.client_name } : {}),
    ...(row.client_uri ? { client_uri: row.client_uri } : {}),
    ...(row.logo_uri ? { logo_uri: row.logo_uri } : {}),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export const clientNotFound = () => authError(404, 'oauth_client_not_found', 'OAuth client not found');

/** The client id of a path: a UUID, else GoTrue's 400 (never a lookup). */
export function clientIdParam(raw: string | undefined): string {
  if (!raw || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(raw)) {
    throw errors.validation('invalid client_id format');
  }
  return raw.toLowerCase();
}

/**
 * OAuth 2.1's rules for a redirect URI: absolute, no fragment, HTTPS, or HTTP to this machine
 * only (a native app's loopback listener). Anything else would let a code travel in the clear.
 */
function redirectUriProblem(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'invalid URL format';
  }
  if (!url.host) return 'must have scheme and host';
  if (uri.includes('#')) return 'fragment not allowed in redirect URI';
  if (url.protocol === 'http:') {
    return url.hostname === 'localhost' || url.hostname === '127.0.0.1'
      ? null
      : 'HTTP scheme only allowed for localhost';
  }
  return url.protocol === 'https:' ? null : 'scheme must be HTTPS or HTTP (localhost only)';
}

function checkRedirectUris(uris: string[], limits: OAuthServerConfig, required: boolean): void {
  if (uris.length === 0) {
    throw errors.validation(required ? 'redirect_uris is required' : 'redirect_uris cannot be empty');
  }
  if (uris.length > limits.maxRedirectUris) {
    throw errors.validation(`redirect_uris cannot exceed ${limits.maxRedirectUris} items`);
  }
  for (const uri of uris) {
    if (uri.length > URI_MAX) throw errors.validation(`redirect_uri cannot exceed ${URI_MAX} characters`);
    const problem = redirectUriProblem(uri);
    if (problem) throw errors.validation(`invalid redirect_uri '${uri}': ${problem}`);
  }
}

function checkGrantTypes(grants: string[]): void {
  if (grants.length === 0) throw errors.validation('grant_types cannot be empty');
  if (!grants.every((g) => (GRANT_TYPES as readonly string[]).includes(g))) {
    throw errors.validation("grant_types must only contain 'authorization_code' and/or 'refresh_token'");
  }
}

function checkLink(field: string, value: string | undefined): void {
  if (!value) return;
  if (value.length > URI_MAX) throw errors.validation(`${field} cannot exceed ${URI_MAX} characters`);
  let url: URL | null;
  try {
    url = new URL(value);
  } catch {
    url = null;
  }
  // shown to users on the consent page, so only web addresses (never javascript: or data:)
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) {
    throw errors.validation(`${field} must be a valid URL`);
  }
}

function checkName(name: string | undefined): void {
  if (name !== undefined && name.length > NAME_MAX) {
    throw errors.validation(`client_name cannot exceed ${NAME_MAX} characters`);
  }
}

function authMethodOf(raw: string | undefined): AuthMethod | undefined {
  if (raw === undefined || raw === '') return undefined;
  const method = AUTH_METHODS.find((m) => m === raw);
  if (!method)
    throw errors.validation(`token_endpoint_auth_method must be one of: ${AUTH_METHODS.join(', ')}`);
  return method;
}

/** GoTrue's pairing of type and method: a public client never authenticates, a confidential one always. */
function typeAndMethod(rawType: string | undefined, rawMethod: string | undefined) {
  const method = authMethodOf(rawMethod);
  let type: ClientType;
  if (rawType === undefined || rawType === '') {
    type = method === 'none' ? 'public' : 'confidential';
  } else {
    const known = CLIENT_TYPES.find((t) => t === rawType);
    if (!known) throw errors.validation("client_type must be 'public' or 'confidential'");
    type = known;
  }
  if (type === 'public' && method !== undefined && method !== 'none') {
    throw errors.validation("public clients must use token_endpoint_auth_method 'none'");
  }
  if (type === 'confidential' && method === 'none') {
    throw errors.validation("confidential clients cannot use token_endpoint_auth_method 'none'");
  }
  return { type, method: method ?? (type === 'public' ? 'none' : 'client_secret_basic') } as const;
}

/** 32 random bytes, URL-safe: the secret is shown once and kept only as its digest. */
function newSecret(): { secret: string; digest: Buffer } {
  const secret = randomBytes(32).toString('base64url');
  return { secret, digest: secretDigest(secret) };
}

function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

function audit(tx: Tx, action: AccountAction, clientId: string, details: Record<string, unknown>) {
  return recordAccountEvent(tx, {
    action,
    userId: null,
    actor: { type: 'service' },
    target: { type: 'oauth_client', id: clientId },
    details,
  });
}

export async function createClient(
  pool: Pool,
  limits: OAuthServerConfig,
  input: CreateClientBody,
): Promise<Record<string, unknown>> {
  const redirectUris = input.redirect_uris ?? [];
  checkRedirectUris(redirectUris, limits, true);
  if (input.grant_types !== undefined) checkGrantTypes(input.grant_types);
  if (input.response_types !== undefined && input.response_types.some((t) => t !== 'code')) {
    throw errors.validation("response_types must only contain 'code'");
  }
  checkName(input.client_name);
  checkLink('client_uri', input.client_uri);
  checkLink('logo_uri', input.logo_uri);
  const { type, method } = typeAndMethod(input.client_type, input.token_endpoint_auth_method);
  const grants = [...new Set(input.grant_types ?? GRANT_TYPES)];
  const credentials = type === 'confidential' ? newSecret() : null;
  return withService(pool, async (tx) => {
    const { rows } = await tx.query<ClientRow>(
      `insert into auth.oauth_clients (client_secret_hash, registration_type, client_type,
          token_endpoint_auth_method, redirect_uris, grant_types, client_name, client_uri, logo_uri)
        values ($1, 'manual', $2, $3, $4, $5, $6, $7, $8)
        returning ${COLUMNS}`,
      [
        credentials?.digest ?? null,
        type,
        method,
        redirectUris,
        grants,
        input.client_name || null,
        input.client_uri || null,
        input.logo_uri || null,
      ],
    );
    const row = rows[0]!;
    await audit(tx, 'oauth_client_created', row.id, {
      client_name: row.client_name,
      client_type: row.client_type,
    });
    return renderClient(row, credentials?.secret);
  });
}

export async function getClient(pool: Pool, id: string): Promise<Record<string, unknown>> {
  return withService(pool, async (tx) => {
    const { rows } = await tx.query<ClientRow>(
      `select ${COLUMNS} from auth.oauth_clients where id = $1 and deleted_at is null`,
      [id],
    );
    if (!rows[0]) throw clientNotFound();
    return renderClient(rows[0]);
  });
}

export async function listClients(
  pool: Pool,
  page: number,
  perPage: number,
): Promise<{ clients: Record<string, unknown>[]; total: number }> {
  return withService(pool, async (tx) => {
    const { rows } = await tx.query<ClientRow & { total: string }>(
      `select ${COLUMNS}, count(*) over () as total from auth.oauth_clients where deleted_at is null
        order by created_at desc, id limit $1 offset $2`,
      [perPage, (page - 1) * perPage],
    );
    let total = rows[0] ? Number(rows[0].total) : 0;
    if (!rows[0] && page > 1) {
      // past the last page: the window count has no row to ride on
      const counted = await tx.query<{ n: string }>(
        'select count(*) as n from auth.oauth_clients where deleted_at is null',
      );
      total = Number(counted.rows[0]?.n ?? 0);
    }
    return { clients: rows.map((row) => renderClient(row)), total };
  });
}

export async function updateClient(
  pool: Pool,
  limits: OAuthServerConfig,
  id: string,
  input: UpdateClientBody,
): Promise<Record<string, unknown>> {
  const fields = Object.keys(input).filter((k) => input[k as keyof UpdateClientBody] !== undefined);
  if (fields.length === 0) throw errors.validation('No fields provided for update');
  if (input.redirect_uris !== undefined) checkRedirectUris(input.redirect_uris, limits, false);
  if (input.grant_types !== undefined) checkGrantTypes(input.grant_types);
  checkName(input.client_name);
  checkLink('client_uri', input.client_uri);
  checkLink('logo_uri', input.logo_uri);
  const method = authMethodOf(input.token_endpoint_auth_method);
  return withService(pool, async (tx) => {
    const current = await tx.query<ClientRow>(
      `select ${COLUMNS} from auth.oauth_clients where id = $1 and deleted_at is null for update`,
      [id],
    );
    const row = current.rows[0];
    if (!row) throw clientNotFound();
    // the method may change within the client's type (basic <-> post); the type itself is fixed
    if (method !== undefined) typeAndMethod(row.client_type, method);
    const { rows } = await tx.query<ClientRow>(
      `update auth.oauth_clients set
          redirect_uris = coalesce($2, redirect_uris),
          grant_types = coalesce($3, grant_types),
          client_name = case when $4::boolean then nullif($5, '') else client_name end,
          client_uri = case when $6::boolean then nullif($7, '') else client_uri end,
          logo_uri = case when $8::boolean then nullif($9, '') else logo_uri end,
          token_endpoint_auth_method = coalesce($10, token_endpoint_auth_method),
          updated_at = now()
        where id = $1
        returning ${COLUMNS}`,
      [
        id,
        input.redirect_uris ?? null,
        input.grant_types ? [...new Set(input.grant_types)] : null,
        input.client_name !== undefined,
        input.client_name ?? null,
        input.client_uri !== undefined,
        input.client_uri ?? null,
        input.logo_uri !== undefined,
        input.logo_uri ?? null,
        method ?? null,
      ],
    );
    await audit(tx, 'oauth_client_updated', id, { fields });
    return renderClient(rows[0]!);
  });
}

export async function deleteClient(pool: Pool, id: string): Promise<void> {
  await withService(pool, async (tx) => {
    // the secret goes with it: a deleted client can never authenticate again
    const { rowCount } = await tx.query(
      `update auth.oauth_clients set deleted_at = now(), updated_at = now()
        where id = $1 and deleted_at is null`,
      [id],
    );
    if (!rowCount) throw clientNotFound();
    // and so do the sessions it holds for users: their tokens stop working at once (decision 0093)
    const ended = await tx.query('delete from auth.sessions where oauth_client_id = $1', [id]);
    await audit(tx, 'oauth_client_deleted', id, { sessions_ended: ended.rowCount ?? 0 });
  });
}

export async function regenerateSecret(pool: Pool, id: string): Promise<Record<string, unknown>> {
  return withService(pool, async (tx) => {
    const current = await tx.query<{ client_type: ClientType }>(
      'select client_type from auth.oauth_clients where id = $1 and deleted_at is null for update',
      [id],
    );
    if (!current.rows[0]) throw clientNotFound();
    if (current.rows[0].client_type !== 'confidential') {
      throw errors.validation('Cannot regenerate secret for public client');
    }
    const { secret, digest } = newSecret();
    const { rows } = await tx.query<ClientRow>(
      `update auth.oauth_clients set client_secret_hash = $2, updated_at = now() where id = $1
        returning ${COLUMNS}`,
      [id, digest],
    );
    await audit(tx, 'oauth_client_secret_regenerated', id, {});
    return renderClient(rows[0]!, secret);
  });
}
