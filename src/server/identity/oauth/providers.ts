// In charge of which OAuth/OIDC providers are configured: reads the EXTERNAL_<PROVIDER>_* variables
// (GoTrue's names) into one description per enabled provider, and refuses incomplete or unsafe
// ones at start-up. Pure.

/** How a provider is spoken to: OIDC with discovery, or GitHub's OAuth 2 plus its user API. */
export type ProviderKind = 'oidc' | 'github';

export interface OAuthProvider {
  /** the provider's name in /authorize?provider= and in identities (google, github, azure, gitlab, oidc) */
  name: string;
  /** what the sign-in button says: "Continue with <label>" */
  label: string;
  kind: ProviderKind;
  clientId: string;
  clientSecret: string;
  /** OIDC: the issuer whose discovery document is read; GitHub: the web host */
  issuer: string;
  /** GitHub only: the REST API base */
  apiUrl?: string;
  /** where the provider sends the browser back: this service's /auth/v1/callback */
  redirectUri: string;
  /** scopes always asked for; /authorize?scopes= adds to them */
  scopes: string[];
}

interface ProviderSpec {
  name: string;
  env: string;
  label: string;
  kind: ProviderKind;
  defaultUrl: string | null;
  scopes: string[];
  issuerFrom: (url: string) => string;
}

const SPECS: ProviderSpec[] = [
  {
    name: 'google',
    env: 'GOOGLE',
    label: 'Google',
    kind: 'oidc',
    defaultUrl: 'https://accounts.google.com',
    scopes: ['openid', 'email', 'profile'],
    issuerFrom: (url) => url,
  },
  {
    name: 'github',
    env: 'GITHUB',
    label: 'GitHub',
    kind: 'github',
    defaultUrl: 'https://github.com',
    scopes: ['user:email'],
    issuerFrom: (url) => url,
  },
  {
    // Microsoft Entra ID (Azure AD): the URL names the tenant, https://login.microsoftonline.com/<tenant>.
    name: 'azure',
    env: 'AZURE',
    label: 'Microsoft',
    kind: 'oidc',
    defaultUrl: null,
    scopes: ['openid', 'email', 'profile'],
    issuerFrom: (url) => `${url}/v2.0`,
  },
  {
    name: 'gitlab',
    env: 'GITLAB',
    label: 'GitLab',
    kind: 'oidc',
    defaultUrl: 'https://gitlab.com',
    scopes: ['openid', 'email', 'profile'],
    issuerFrom: (url) => url,
  },
  {
    name: 'oidc',
    env: 'OIDC',
    label: 'single sign-on',
    kind: 'oidc',
    defaultUrl: null,
    scopes: ['openid', 'email', 'profile'],
    issuerFrom: (url) => url,
  },
];

const TRUE_VALUES = new Set(['true', '1', 'on', 'yes']);
const FALSE_VALUES = new Set(['false', '0', 'off', 'no', '']);

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '127.0.0.1' || hostname === '[::1]';
}

/**
 * A provider URL: https, or http on a loopback address only (a provider on this machine, as in
 * development and tests); anything else would send client secrets and codes in clear.
 */
function providerUrl(variable: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${variable} must be an absolute URL`);
  }
  const plainLoopback = url.protocol === 'http:' && isLoopback(url.hostname);
  if (url.protocol !== 'https:' && !plainLoopback) {
    throw new Error(`${variable} must be an https:// URL (http is accepted for localhost only)`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new Error(`${variable} must not carry a query, fragment or credentials`);
  }
  return url.toString().replace(/\/+$/, '');
}

/**
 * The enabled providers. `authUrl` is the service's public identity base ($AUTH_URL). Throws an
 * Error naming the variable for an enabled provider without client id, secret or required URL.
 */
export function parseOAuthProviders(
  env: Record<string, string | undefined>,
  authUrl: string,
): OAuthProvider[] {
  const providers: OAuthProvider[] = [];
  for (const spec of SPECS) {
    const prefix = `EXTERNAL_${spec.env}_`;
    const enabledRaw = (env[`${prefix}ENABLED`] ?? '').toLowerCase();
    if (!TRUE_VALUES.has(enabledRaw)) {
      if (!FALSE_VALUES.has(enabledRaw)) throw new Error(`${prefix}ENABLED must be true or false`);
      continue;
    }
    // A list (several apps' client ids, for ID tokens) signs in on the web with the first.
    const clientId = (env[`${prefix}CLIENT_ID`] ?? '').split(',')[0]!.trim();
    const clientSecret = env[`${prefix}SECRET`] ?? '';
    if (!clientId) throw new Error(`${prefix}CLIENT_ID is required when ${prefix}ENABLED is true`);
    if (!clientSecret) throw new Error(`${prefix}SECRET is required when ${prefix}ENABLED is true`);
    const rawUrl = env[`${prefix}URL`] || spec.defaultUrl;
    if (!rawUrl) throw new Error(`${prefix}URL is required when ${prefix}ENABLED is true`);
    const url = providerUrl(`${prefix}URL`, rawUrl);
    const redirectUri = env[`${prefix}REDIRECT_URI`] || `${authUrl}/auth/v1/callback`;
    providerUrl(`${prefix}REDIRECT_URI`, redirectUri);
    const provider: OAuthProvider = {
      name: spec.name,
      label: (spec.name === 'oidc' && env.EXTERNAL_OIDC_NAME) || spec.label,
      kind: spec.kind,
      clientId,
      clientSecret,
      issuer: spec.issuerFrom(url),
      redirectUri,
      scopes: spec.scopes,
    };
    if (spec.kind === 'github') {
      const api =
        env[`${prefix}API_URL`] ||
        (url === 'https://github.com' ? 'https://api.github.com' : `${url}/api/v3`);
      provider.apiUrl = providerUrl(`${prefix}API_URL`, api);
    }
    providers.push(provider);
  }
  return providers;
}

/** The names of every provider this service knows, enabled or not. */
export const KNOWN_PROVIDERS: readonly string[] = SPECS.map((s) => s.name);
