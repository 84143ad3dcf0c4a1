// In charge of the OAuth 2.1 server's discovery document (RFC 8414, GET
// /.well-known/oauth-authorization-server): where a client finds the endpoints and what they accept.
import { SUPPORTED_SCOPES } from './authorizations.js';

/**
 * The metadata for the server whose tokens carry `issuer`; the endpoints are on the public
 * identity URL (AUTH_URL), which JWT_ISSUER need not name.
 */
export function authorizationServerMetadata(issuer: string, authUrl: string): Record<string, unknown> {
  const base = `${authUrl.replace(/\/+$/, '')}/auth/v1`;
  return {
    issuer,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    jwks_uri: `${base}/.well-known/jwks.json`,
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    // S256 only: OAuth 2.1 leaves plain out
    code_challenge_methods_supported: ['S256'],
  };
}
