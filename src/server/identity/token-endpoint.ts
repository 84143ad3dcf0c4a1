// In charge of POST /auth/v1/token, the identity service's hottest path (every sign-in, and every
// client's refresh each hour), as a framework-free handler: the server's listener serves it on
// node:http directly, as it does the data API (decision 0029), and the Hono app reaches the same
// handler for in-process requests. Which grant, and its body.
import { normalizePhone } from './phone-numbers.js';
import { parseJsonBody } from '../http/body.js';
import type { ApiInput, Reply } from '../http/reply.js';
import { parseWith } from '../http/validate.js';
import type { Logger } from '../logger.js';
import type { TokenSigner } from './access-tokens.js';
import { resolveCaller, type ProjectKeys } from './caller.js';
import { authError, authErrorReply, authFailure, errors } from './errors.js';
import { requestContextOf, type TokenResponse } from './flows/context.js';
import { idTokenGrantBody, passwordGrantBody, pkceGrantBody, refreshGrantBody } from './request-schemas.js';
import type { IdentityService } from './service.js';

export interface TokenEndpointDeps {
  service: IdentityService;
  keys: ProjectKeys;
  signer: TokenSigner;
  trustProxy: boolean;
  logger: Logger;
}

function grantTypeOf(url: string): string | null {
  const query = url.indexOf('?');
  return query === -1 ? null : new URLSearchParams(url.slice(query + 1)).get('grant_type');
}

export function createTokenHandler(deps: TokenEndpointDeps): (input: ApiInput) => Promise<Reply> {
  const grant = async (input: ApiInput): Promise<TokenResponse> => {
    const caller = await resolveCaller(input.headers, deps.keys, deps.signer);
    const grantType = grantTypeOf(input.url);
    // The body is read (within its size cap) even for a request that is refused.
    const body = parseJsonBody(await input.body());
    const context = requestContextOf(input.headers, input.incoming, deps.trustProxy);
    switch (grantType) {
      case 'refresh_token':
        return deps.service.refreshGrant(parseWith(refreshGrantBody, body).refresh_token, context);
      case 'password': {
        const { email, phone, password } = parseWith(passwordGrantBody, body);
        if (email) return deps.service.passwordGrant(email, password, context);
        if (phone) return deps.service.phonePasswordGrant(normalizePhone(phone), password, context);
        throw errors.validation('email: missing email or phone');
      }
      case 'pkce': {
        const { auth_code, code_verifier } = parseWith(pkceGrantBody, body);
        return deps.service.pkceGrant(auth_code ?? '', code_verifier ?? '', context);
      }
      case 'id_token': {
        const b = parseWith(idTokenGrantBody, body ?? {});
        return deps.service.idTokenGrant(
          {
            provider: b.provider ?? '',
            idToken: b.id_token ?? '',
            accessToken: b.access_token ?? '',
            nonce: b.nonce ?? '',
            clientId: b.client_id ?? '',
            issuer: b.issuer ?? '',
            linkIdentity: b.link_identity === true,
          },
          caller,
          context,
          (reason) => deps.logger.info({ err: reason }, 'ID token refused'),
        );
      }
      case 'web3':
        // supabase-js's signInWithWeb3 expects GoTrue's answer for a provider that is not enabled.
        throw authError(422, 'web3_provider_disabled', 'Web3 provider is disabled');
      default:
        throw errors.unsupportedGrant();
    }
  };

  return async (input) => {
    try {
      const answer = await grant(input);
      return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(answer) };
    } catch (error) {
      return authErrorReply(authFailure(error, deps.logger, '/auth/v1/token'));
    }
  };
}
