// In charge of who a realtime caller is: the socket's apikey (the project key or the service-role
// key, compared in constant time) and each channel's access token, verified exactly as the other
// APIs verify a bearer (caller.ts), so a token good for /rest/v1 is good here and no other is.
import type { Caller, ProjectKeys } from '../identity/caller.js';
import { resolveCaller } from '../identity/caller.js';
import type { TokenSigner } from '../identity/access-tokens.js';
import type { HeaderReader } from '../http/headers.js';

export interface RealtimeCaller {
  caller: Caller;
  /** when the token stops being good (seconds since the epoch); null for a key, which does not expire */
  exp: number | null;
}

function headersOf(apikey: string, bearer: string | null): HeaderReader {
  return {
    get: (name) => {
      if (name === 'apikey') return apikey;
      if (name === 'authorization' && bearer !== null) return `Bearer ${bearer}`;
      return null;
    },
  };
}

/** The caller a key alone makes, or null when `apikey` is neither project key. */
export async function callerOfKey(
  apikey: string | null,
  keys: ProjectKeys,
  signer: TokenSigner,
): Promise<Caller | null> {
  if (!apikey) return null;
  try {
    return await resolveCaller(headersOf(apikey, null), keys, signer);
  } catch {
    return null;
  }
}

/**
 * The caller a channel acts as: its access token if it sent one, else the socket's key. Tokens
 * that start with `sb_` are keys of Supabase's new format, which Supabase replaces with the
 * socket's own token; here too they mean "the socket's key". Throws the identity service's 401
 * error (its message says why) for a token that is neither a key nor valid.
 */
export async function callerOfToken(
  apikey: string,
  token: string | null,
  keys: ProjectKeys,
  signer: TokenSigner,
): Promise<RealtimeCaller> {
  const bearer = token === null || token === '' || token.startsWith('sb_') ? null : token;
  const caller = await resolveCaller(headersOf(apikey, bearer), keys, signer);
  return { caller, exp: caller.kind === 'user' ? caller.claims.exp : null };
}
