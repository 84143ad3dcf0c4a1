// In charge of the access token a web page uses for realtime (decision 0082): the session's own
// token, re-signed with a shorter life. The page's session lives in HttpOnly cookies, so script
// never holds the session's token nor its refresh token; it holds this one, which carries the
// session's claims unchanged (the same user, role, aal and session_id: it outranks nothing) and
// expires at the earlier of its own short life and the session token's expiry (it outlives
// nothing). Realtime checks the session's standing at every join and every new token, so a
// signed-out session's live token stops there, and no new one is handed out.
import { signAccessToken, type AccessTokenClaims, type TokenSigner } from '../identity/access-tokens.js';

export interface LiveToken {
  token: string;
  /** seconds since the epoch */
  expiresAt: number;
}

/** A live token for the session whose verified access-token claims these are, or null when they have lapsed. */
export async function liveToken(
  signer: TokenSigner,
  claims: AccessTokenClaims,
  lifeSeconds: number,
  now = Math.floor(Date.now() / 1000),
): Promise<LiveToken | null> {
  const life = Math.min(lifeSeconds, claims.exp - now);
  if (life <= 0) return null;
  return signAccessToken(
    { ...signer, ttlSeconds: life },
    {
      userId: claims.sub,
      aud: claims.aud,
      role: claims.role,
      email: claims.email,
      phone: claims.phone,
      appMetadata: claims.app_metadata,
      userMetadata: claims.user_metadata,
      isAnonymous: claims.is_anonymous,
      sessionId: claims.session_id,
      aal: claims.aal,
      amr: claims.amr,
    },
    now,
  );
}
