// Test support: a stand-in OAuth/OIDC provider in the test process, on real HTTP on a random port.
// It publishes a discovery document and JWKS, its authorization endpoint approves at once as the
// person the test chose, and its token endpoint checks the client, the code and the PKCE verifier
// and issues real RS256-signed ID tokens (jose). It also answers as GitHub (OAuth 2 and its user
// API). Tests can make it misbehave: wrong audience, issuer, nonce or signing key.
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export interface StandInPerson {
  sub: string;
  email: string;
  email_verified: boolean;
  name?: string;
}

export interface IdTokenTampering {
  aud?: string;
  iss?: string;
  /** another nonce; '' leaves the nonce out */
  nonce?: string;
  /** sign with a key the JWKS does not publish (same kid) */
  foreignKey?: boolean;
}

interface PendingCode {
  person: StandInPerson;
  clientId: string;
  redirectUri: string;
  codeChallenge: string | null;
  nonce: string | null;
}

export interface StandInProvider {
  url: string;
  clientId: string;
  clientSecret: string;
  /** who the authorization endpoint approves as next */
  person: StandInPerson;
  /** how the next ID tokens are spoiled (reset to {} by the test when done) */
  tamper: IdTokenTampering;
  /** what the last authorization request asked for */
  lastAuthorization: URLSearchParams | null;
  /** env for a Tenantry server with this provider as Google and as GitHub */
  env(): Record<string, string>;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startStandInProvider(): Promise<StandInProvider> {
  const keys = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256');
  const kid = randomUUID();
  const publicJwk: JWK = { ...(await exportJWK(keys.publicKey)), kid, alg: 'RS256', use: 'sig' };
  const codes = new Map<string, PendingCode>();
  const accessTokens = new Map<string, StandInPerson>();

  const server: Server = createServer((request, response) => {
    void (async () => {
      const url = new URL(request.url ?? '/', provider.url);
      const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        response.writeHead(status, { 'content-type': 'application/json', ...headers });
        response.end(JSON.stringify(body));
      };
      if (url.pathname === '/.well-known/openid-configuration') {
        return send(200, {
          issuer: provider.url,
          authorization_endpoint: `${provider.url}/authorize`,
          token_endpoint: `${provider.url}/token`,
          jwks_uri: `${provider.url}/jwks`,
          userinfo_endpoint: `${provider.url}/userinfo`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['client_secret_post', 'client_secret_basic'],
        });
      }
      if (url.pathname === '/jwks') return send(200, { keys: [publicJwk] });
      if (url.pathname === '/authorize' || url.pathname === '/login/oauth/authorize') {
        const q = url.searchParams;
        provider.lastAuthorization = q;
        const redirectUri = q.get('redirect_uri') ?? '';
        if (q.get('client_id') !== provider.clientId || !redirectUri) {
          return send(400, { error: 'invalid_request' });
        }
        const code = randomUUID();
        codes.set(code, {
          person: { ...provider.person },
          clientId: q.get('client_id')!,
          redirectUri,
          codeChallenge: q.get('code_challenge'),
          nonce: q.get('nonce'),
        });
        const back = new URL(redirectUri);
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.get('state') ?? '');
        response.writeHead(302, { location: back.toString() });
        return response.end();
      }
      if (
        request.method === 'POST' &&
        (url.pathname === '/token' || url.pathname === '/login/oauth/access_token')
      ) {
        const form = new URLSearchParams(await readBody(request));
        let clientId = form.get('client_id');
        let secret = form.get('client_secret');
        const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? '');
        if (basic) {
          const [id, pass] = Buffer.from(basic[1]!, 'base64').toString().split(':');
          clientId = decodeURIComponent(id ?? '');
          secret = decodeURIComponent(pass ?? '');
        }
        if (clientId !== provider.clientId || secret !== provider.clientSecret) {
          return send(401, { error: 'invalid_client' });
        }
        const pending = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (!pending || pending.redirectUri !== form.get('redirect_uri')) {
          return send(400, { error: 'invalid_grant' });
        }
        const verifier = form.get('code_verifier') ?? '';
        const derived = createHash('sha256').update(verifier).digest('base64url');
        if (pending.codeChallenge !== derived) {
          return send(400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
        }
        const accessToken = randomUUID();
        accessTokens.set(accessToken, pending.person);
        const tamper = provider.tamper;
        const claims: Record<string, unknown> = {
          email: pending.person.email,
          email_verified: pending.person.email_verified,
          name: pending.person.name ?? 'Stand-in Person',
        };
        const nonce = tamper.nonce ?? pending.nonce;
        if (nonce) claims.nonce = nonce;
        const signingKey: CryptoKey = tamper.foreignKey ? foreign.privateKey : keys.privateKey;
        const idToken = await new SignJWT(claims)
          .setProtectedHeader({ alg: 'RS256', kid })
          .setIssuer(tamper.iss ?? provider.url)
          .setAudience(tamper.aud ?? provider.clientId)
          .setSubject(pending.person.sub)
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(signingKey);
        return send(200, {
          access_token: accessToken,
          token_type: 'Bearer',
          expires_in: 300,
          ...(url.pathname === '/token' ? { id_token: idToken } : { scope: 'user:email' }),
        });
      }
      const bearer = /^(?:Bearer|token) (.+)$/i.exec(request.headers.authorization ?? '')?.[1] ?? '';
      const person = accessTokens.get(bearer);
      if (url.pathname === '/api/v3/user' && person) {
        return send(200, { id: Number(person.sub) || 4242, login: 'standin', name: person.name ?? null });
      }
      if (url.pathname === '/api/v3/user/emails' && person) {
        return send(200, [{ email: person.email, primary: true, verified: person.email_verified }]);
      }
      return send(404, { error: 'not_found' });
    })().catch((error: unknown) => {
      response.writeHead(500);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const provider: StandInProvider = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    clientId: 'tenantry-test-client',
    clientSecret: 'stand-in-secret-value',
    person: { sub: randomUUID(), email: 'person@example.com', email_verified: true },
    tamper: {},
    lastAuthorization: null,
    env() {
      return {
        EXTERNAL_GOOGLE_ENABLED: 'true',
        EXTERNAL_GOOGLE_CLIENT_ID: provider.clientId,
        EXTERNAL_GOOGLE_SECRET: provider.clientSecret,
        EXTERNAL_GOOGLE_URL: provider.url,
        EXTERNAL_GITHUB_ENABLED: 'true',
        EXTERNAL_GITHUB_CLIENT_ID: provider.clientId,
        EXTERNAL_GITHUB_SECRET: provider.clientSecret,
        EXTERNAL_GITHUB_URL: provider.url,
      };
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return provider;
}

/**
 * Follows redirects by hand from `url` until one reaches `stopAt` (the app: redirect_to with its
 * code, tokens or error) and returns it. `publicOrigin` is the service's public address (AUTH_URL),
 * reached at `realOrigin`, as a reverse proxy would.
 */
export async function followToApp(
  url: string,
  stopAt: string,
  proxy?: { publicOrigin: string; realOrigin: string },
): Promise<URL> {
  let next = url;
  for (let hop = 0; hop < 10; hop += 1) {
    if (next.startsWith(stopAt)) return new URL(next);
    if (proxy && next.startsWith(proxy.publicOrigin)) {
      next = proxy.realOrigin + next.slice(proxy.publicOrigin.length);
    }
    const response = await fetch(next, { redirect: 'manual' });
    const location = response.headers.get('location');
    if (!location)
      throw new Error(`${next} answered ${response.status} without a redirect: ${await response.text()}`);
    next = new URL(location, next).toString();
  }
  throw new Error('too many redirects');
}
