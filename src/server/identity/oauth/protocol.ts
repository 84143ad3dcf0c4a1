// In charge of the protocol work with a provider, through openid-client: discovery (cached), the
// authorization URL with state, nonce and the provider-side PKCE challenge, and the callback's
// code exchange with every check (state, PKCE, ID token signature, issuer, audience, expiry and
// nonce), ending in who the provider says the person is. GitHub has no ID token: its user API is
// read with the access token instead.
import * as client from 'openid-client';
import type { OAuthProvider } from './providers.js';

/** Who the provider vouches for, and what goes into the identity's identity_data. */
export interface ProviderUser {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  /** GoTrue's identity_data: iss, sub, email, email_verified, name, picture, ... */
  identityData: Record<string, unknown>;
  accessToken: string;
  refreshToken: string | null;
}

/** What the authorization request committed to, checked again at the callback. */
export interface AuthorizationChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** A provider's answer that fails a check: the message is safe to show, the cause is for logs. */
export class ProviderError extends Error {
  override name = 'ProviderError';
}

const REQUEST_TIMEOUT_SECONDS = 10;
const configurations = new Map<string, Promise<client.Configuration>>();

function isLoopbackUrl(raw: string): boolean {
  const { protocol, hostname } = new URL(raw);
  return protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(hostname);
}

async function buildConfiguration(provider: OAuthProvider): Promise<client.Configuration> {
  // http is only ever configured for a provider on this machine (providers.ts refuses the rest).
  const insecure = isLoopbackUrl(provider.issuer);
  let config: client.Configuration;
  if (provider.kind === 'github') {
    config = new client.Configuration(
      {
        issuer: provider.issuer,
        authorization_endpoint: `${provider.issuer}/login/oauth/authorize`,
        token_endpoint: `${provider.issuer}/login/oauth/access_token`,
      },
      provider.clientId,
      provider.clientSecret,
    );
    if (insecure) client.allowInsecureRequests(config);
  } else {
    config = await client.discovery(
      new URL(provider.issuer),
      provider.clientId,
      provider.clientSecret,
      undefined,
      {
        timeout: REQUEST_TIMEOUT_SECONDS,
        ...(insecure ? { execute: [client.allowInsecureRequests] } : {}),
      },
    );
    // ID tokens come over TLS from the token endpoint, where OIDC lets a client skip the
    // signature; we check it anyway against the provider's published keys.
    client.enableNonRepudiationChecks(config);
  }
  config.timeout = REQUEST_TIMEOUT_SECONDS;
  return config;
}

/** The provider's configuration, discovered once per process; a failed discovery is retried next time. */
function configurationFor(provider: OAuthProvider): Promise<client.Configuration> {
  const key = `${provider.name}|${provider.issuer}|${provider.clientId}`;
  let pending = configurations.get(key);
  if (!pending) {
    pending = buildConfiguration(provider);
    configurations.set(key, pending);
    pending.catch(() => configurations.delete(key));
  }
  return pending;
}

/** Fresh secrets for one authorization. */
export function newAuthorizationChecks(): AuthorizationChecks {
  return {
    state: client.randomState(),
    nonce: client.randomNonce(),
    codeVerifier: client.randomPKCECodeVerifier(),
  };
}

/** The URL that sends the browser to the provider. `extra` are the caller's query parameters. */
export async function authorizationUrl(
  provider: OAuthProvider,
  checks: AuthorizationChecks,
  scopes: string[],
  extra: Record<string, string>,
): Promise<string> {
  let config: client.Configuration;
  try {
    config = await configurationFor(provider);
  } catch (error) {
    throw new ProviderError(`The ${provider.label} sign-in service could not be reached`, { cause: error });
  }
  const scope = [...new Set([...provider.scopes, ...scopes])].join(' ');
  const parameters: Record<string, string> = {
    ...extra,
    redirect_uri: provider.redirectUri,
    scope,
    state: checks.state,
    code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
    code_challenge_method: 'S256',
  };
  if (provider.kind === 'oidc') parameters.nonce = checks.nonce;
  return client.buildAuthorizationUrl(config, parameters).href;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The callback: exchanges the code and returns the person. `callbackUrl` is the request URL as the
 * provider sent it (code, state, or error). Throws ProviderError when any check fails.
 */
export async function completeAuthorization(
  provider: OAuthProvider,
  callbackUrl: URL,
  checks: AuthorizationChecks,
): Promise<ProviderUser> {
  const config = await configurationFor(provider).catch((error: unknown) => {
    throw new ProviderError(`The ${provider.label} sign-in service could not be reached`, { cause: error });
  });
  // The provider compares redirect_uri with the one it was sent; the callback URL we are reached
  // at may differ (proxies), so the code is presented at the configured one.
  const presented = new URL(provider.redirectUri);
  presented.search = callbackUrl.search;
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(config, presented, {
      expectedState: checks.state,
      pkceCodeVerifier: checks.codeVerifier,
      ...(provider.kind === 'oidc' ? { expectedNonce: checks.nonce, idTokenExpected: true } : {}),
    });
  } catch (error) {
    throw new ProviderError(`${provider.label} did not confirm the sign-in`, { cause: error });
  }
  if (provider.kind === 'github') return githubUser(config, provider, tokens);
  const claims = tokens.claims();
  if (!claims) throw new ProviderError(`${provider.label} sent no ID token`);
  const email = text(claims.email) ?? null;
  const data: Record<string, unknown> = {
    iss: claims.iss,
    sub: claims.sub,
    email: email ?? undefined,
    email_verified: claims.email_verified === true,
    phone_verified: false,
    name: text(claims.name),
    full_name: text(claims.name),
    picture: text(claims.picture),
    avatar_url: text(claims.picture),
    preferred_username: text(claims.preferred_username),
    provider_id: claims.sub,
  };
  return {
    subject: claims.sub,
    email: email?.toLowerCase() ?? null,
    emailVerified: claims.email_verified === true,
    identityData: withoutUndefined(data),
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token ?? null,
  };
}

function withoutUndefined(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).filter(([, v]) => v !== undefined));
}

interface GithubEmail {
  email: string;
  primary: boolean;
  verified: boolean;
}

async function githubJson(config: client.Configuration, token: string, url: string): Promise<unknown> {
  const response = await client.fetchProtectedResource(
    config,
    token,
    new URL(url),
    'GET',
    undefined,
    new Headers({ accept: 'application/vnd.github+json' }),
  );
  if (!response.ok)
    throw new ProviderError(`GitHub answered ${response.status} for ${new URL(url).pathname}`);
  return response.json();
}

/** GitHub's user and its primary e-mail (with whether GitHub verified it). */
async function githubUser(
  config: client.Configuration,
  provider: OAuthProvider,
  tokens: { access_token: string; refresh_token?: string },
): Promise<ProviderUser> {
  let user: Record<string, unknown>;
  let emails: GithubEmail[];
  try {
    user = (await githubJson(config, tokens.access_token, `${provider.apiUrl}/user`)) as Record<
      string,
      unknown
    >;
    emails = (await githubJson(
      config,
      tokens.access_token,
      `${provider.apiUrl}/user/emails`,
    )) as GithubEmail[];
  } catch (error) {
    throw new ProviderError('GitHub did not say who signed in', { cause: error });
  }
  const id = user.id;
  if (typeof id !== 'number' && typeof id !== 'string') throw new ProviderError('GitHub sent no user id');
  const subject = String(id);
  const primary = Array.isArray(emails) ? (emails.find((e) => e.primary) ?? emails[0]) : undefined;
  const email = primary && typeof primary.email === 'string' ? primary.email.toLowerCase() : null;
  const emailVerified = primary?.verified === true;
  const data: Record<string, unknown> = {
    iss: provider.apiUrl,
    sub: subject,
    email: email ?? undefined,
    email_verified: emailVerified,
    phone_verified: false,
    name: text(user.name) ?? text(user.login),
    full_name: text(user.name),
    user_name: text(user.login),
    preferred_username: text(user.login),
    avatar_url: text(user.avatar_url),
    picture: text(user.avatar_url),
    provider_id: subject,
  };
  return {
    subject,
    email,
    emailVerified,
    identityData: withoutUndefined(data),
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token ?? null,
  };
}
