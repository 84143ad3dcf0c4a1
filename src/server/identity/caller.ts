// In charge of deciding who is calling, for every /auth/v1 and /rest/v1 request: the apikey
// header must name a project key, and the Authorization bearer (a key, a user access token, a
// workspace API key where the keys carry its verifier, or a token we signed that names an admin
// role) decides the database role. Shared by the identity service, the data API, storage and
// realtime.
import {
  isAdminToken,
  verifyAccessToken,
  type AccessTokenClaims,
  type TokenSigner,
} from './access-tokens.js';
import { errors } from './errors.js';
import { digestsEqual, secretDigest } from './secrets.js';
import { looksLikeWorkspaceKey, type WorkspaceKeyVerifier } from './workspace-keys.js';
import type { HeaderReader } from '../http/headers.js';

export interface ProjectKeys {
  projectApiKey: string;
  serviceRoleKey: string;
  /** workspace API keys (decision 0091): given to the data API, storage and realtime, not /auth/v1 */
  workspaceKeys?: WorkspaceKeyVerifier;
}

export type Caller =
  | { kind: 'anon'; claims: { role: 'anon' } }
  | { kind: 'service'; claims: { role: 'service_role' } }
  | { kind: 'user'; claims: AccessTokenClaims & { role: 'authenticated' }; token: string };

const ANON: Caller = { kind: 'anon', claims: { role: 'anon' } };
const SERVICE: Caller = { kind: 'service', claims: { role: 'service_role' } };

// The keys' digests, made once per set of keys rather than twice per request.
const keyDigests = new WeakMap<ProjectKeys, { project: Buffer; service: Buffer }>();

function keyRole(value: string, keys: ProjectKeys): Caller | null {
  let digests = keyDigests.get(keys);
  if (!digests) {
    digests = { project: secretDigest(keys.projectApiKey), service: secretDigest(keys.serviceRoleKey) };
    keyDigests.set(keys, digests);
  }
  // Both comparisons always run, so timing does not tell which key (if any) was close.
  const given = secretDigest(value);
  const isProject = digestsEqual(value, given, keys.projectApiKey, digests.project);
  const isService = digestsEqual(value, given, keys.serviceRoleKey, digests.service);
  if (isService) return SERVICE;
  if (isProject) return ANON;
  return null;
}

/** Throws 401 for a missing or unknown apikey, or a bearer that is neither a key nor a valid token. */
export async function resolveCaller(
  headers: HeaderReader,
  keys: ProjectKeys,
  signer: TokenSigner,
): Promise<Caller> {
  const apikey = headers.get('apikey');
  const keyCaller = apikey ? keyRole(apikey, keys) : null;
  if (!keyCaller) throw errors.invalidApiKey();

  const authorization = headers.get('authorization');
  if (authorization === null) return keyCaller;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw errors.badJwt('Authorization header must be "Bearer <token>"');
  const bearer = match[1]!;
  const bearerKey = keyRole(bearer, keys);
  if (bearerKey) return bearerKey;
  if (looksLikeWorkspaceKey(bearer)) {
    if (!keys.workspaceKeys) throw errors.badJwt('API keys are not accepted here');
    const key = await keys.workspaceKeys.verify(bearer);
    // The key's principal, in the shape of a user's claims, so every path treats it as one.
    const keyClaims = {
      ...key,
      iss: signer.issuer,
      iat: Math.floor(Date.now() / 1000),
      email: '',
      phone: '',
      amr: [],
      session_id: '',
    } as AccessTokenClaims & { role: 'authenticated' };
    return { kind: 'user', claims: keyClaims, token: bearer };
  }
  let claims: AccessTokenClaims;
  try {
    claims = await verifyAccessToken(signer, bearer);
  } catch (error) {
    // Checked only once a token is not a user's, so user requests pay nothing for it.
    if (await isAdminToken(signer, bearer)) return SERVICE;
    throw error;
  }
  return { kind: 'user', claims: claims as AccessTokenClaims & { role: 'authenticated' }, token: bearer };
}
