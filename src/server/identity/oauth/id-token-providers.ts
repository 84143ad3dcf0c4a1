// In charge of which issuers POST /token?grant_type=id_token accepts (GoTrue's list): Google,
// Apple, Microsoft, Facebook, Keycloak, Kakao and the operator's own OIDC issuer (provider `oidc`)
// from their EXTERNAL_<PROVIDER>_* variables, each
// with its well-known issuer, signing keys and accepted client ids, plus the operator's explicit
// EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS. Pure; refuses unsafe URLs at start-up.

export interface IdTokenProvider {
  /** the name clients send as `provider`, and the identities' provider */
  name: string;
  label: string;
  enabled: boolean;
  /** the iss values accepted; empty for Microsoft, whose tenant issuer is read from the token */
  issuers: string[];
  /** the audiences accepted (EXTERNAL_<P>_CLIENT_ID, comma separated; Apple adds the iOS bundle id) */
  clientIds: string[];
  /** EXTERNAL_<P>_SKIP_NONCE_CHECK: for SDKs that cannot set a nonce (always for Facebook Limited Login) */
  skipNonceCheck: boolean;
  /** where the signing keys are; null: from the issuer's discovery document */
  jwksUrl: string | null;
}

export interface IdTokenSettings {
  providers: IdTokenProvider[];
  /** EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS: other issuers, whose audience is the client_id sent */
  allowedIssuers: string[];
}

interface Spec {
  name: string;
  env: string;
  label: string;
  issuers: string[];
  jwksUrl: string | null;
  alwaysSkipNonce?: boolean;
}

// GoTrue's issuers; the key URLs are the ones each issuer's discovery document names.
const SPECS: Spec[] = [
  {
    name: 'google',
    env: 'GOOGLE',
    label: 'Google',
    // Google signs both spellings (its documentation names them).
    issuers: ['https://accounts.google.com', 'accounts.google.com'],
    jwksUrl: 'https://www.googleapis.com/oauth2/v3/certs',
  },
  {
    name: 'apple',
    env: 'APPLE',
    label: 'Apple',
    issuers: ['https://appleid.apple.com', 'https://account.apple.com'],
    jwksUrl: 'https://appleid.apple.com/auth/keys',
  },
  { name: 'azure', env: 'AZURE', label: 'Microsoft', issuers: [], jwksUrl: null },
  {
    name: 'facebook',
    env: 'FACEBOOK',
    label: 'Facebook',
    issuers: ['https://www.facebook.com'],
    jwksUrl: 'https://limited.facebook.com/.well-known/oauth/openid/jwks/',
    // Facebook Limited Login's token carries the nonce unhashed: GoTrue never checks it.
    alwaysSkipNonce: true,
  },
  { name: 'keycloak', env: 'KEYCLOAK', label: 'Keycloak', issuers: [], jwksUrl: null },
  // The operator's own OIDC issuer (EXTERNAL_OIDC_*, as for sign-in on the web), keys by discovery.
  { name: 'oidc', env: 'OIDC', label: 'single sign-on', issuers: [], jwksUrl: null },
  {
    name: 'kakao',
    env: 'KAKAO',
    label: 'Kakao',
    issuers: ['https://kauth.kakao.com'],
    jwksUrl: 'https://kauth.kakao.com/.well-known/jwks.json',
  },
];

/** Microsoft's per-tenant issuer (v2.0 endpoints), the only form its ID tokens carry. */
export const AZURE_ISSUER = /^https:\/\/login\.microsoftonline\.com\/[A-Za-z0-9.-]+\/v2\.0$/;

const TRUE_VALUES = new Set(['true', '1', 'on', 'yes']);
const FALSE_VALUES = new Set(['false', '0', 'off', 'no', '']);

function flag(env: Record<string, string | undefined>, variable: string): boolean {
  const raw = (env[variable] ?? '').toLowerCase();
  if (TRUE_VALUES.has(raw)) return true;
  if (!FALSE_VALUES.has(raw)) throw new Error(`${variable} must be true or false`);
  return false;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** https, or http on a loopback address only (an issuer on this machine, in development and tests). */
export function safeIssuerUrl(variable: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`${variable} must name absolute URLs`);
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new Error(`${variable} must name https:// URLs (http is accepted for localhost only)`);
  }
  if (url.search || url.hash || url.username || url.password) {
    throw new Error(`${variable} must not carry a query, fragment or credentials`);
  }
  return raw;
}

export function parseIdTokenSettings(env: Record<string, string | undefined>): IdTokenSettings {
  const providers = SPECS.map((spec): IdTokenProvider => {
    const prefix = `EXTERNAL_${spec.env}_`;
    const enabled = flag(env, `${prefix}ENABLED`);
    const clientIds = list(env[`${prefix}CLIENT_ID`]);
    if (spec.name === 'apple') clientIds.push(...list(env.EXTERNAL_IOS_BUNDLE_ID));
    let issuers = spec.issuers;
    if ((spec.name === 'keycloak' || spec.name === 'oidc') && enabled) {
      // Named by its URL, which is its issuer.
      const url = env[`${prefix}URL`];
      if (!url) throw new Error(`${prefix}URL is required when ${prefix}ENABLED is true`);
      issuers = [safeIssuerUrl(`${prefix}URL`, url)];
    }
    const jwksOverride = env[`${prefix}JWKS_URL`];
    return {
      name: spec.name,
      label: (spec.name === 'oidc' && env.EXTERNAL_OIDC_NAME) || spec.label,
      enabled,
      issuers,
      clientIds,
      skipNonceCheck: spec.alwaysSkipNonce === true || flag(env, `${prefix}SKIP_NONCE_CHECK`),
      jwksUrl: jwksOverride ? safeIssuerUrl(`${prefix}JWKS_URL`, jwksOverride) : spec.jwksUrl,
    };
  });
  const allowedIssuers = list(env.EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS).map((issuer) =>
    safeIssuerUrl('EXTERNAL_ALLOWED_ID_TOKEN_ISSUERS', issuer),
  );
  return { providers, allowedIssuers };
}
