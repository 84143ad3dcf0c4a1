// In charge of the signed-in user's identities: GET /user/identities and DELETE
// /user/identities/{id} (unlinking), which never leaves an account without a way to sign in.
import { withService } from '../../db/transactions.js';
import type { AccessTokenClaims } from '../access-tokens.js';
import { authError } from '../errors.js';
import { refreshProviders } from '../oauth/accounts.js';
import { oauthErrors } from './oauth.js';
import { uuid } from '../request-schemas.js';
import { renderUser } from '../users.js';
import { requireLiveUser, type IdentityDeps } from './context.js';

export const identityErrors = {
  notUuid: () => authError(404, 'validation_failed', 'identity_id must be an UUID'),
  notFound: () => authError(422, 'identity_not_found', "Identity doesn't exist"),
  lastIdentity: () =>
    authError(422, 'single_identity_not_deletable', 'User must have at least 1 identity after unlinking'),
};

/** The user's identities as GoTrue renders them inside the user object. */
export async function listIdentities(deps: IdentityDeps, claims: AccessTokenClaims): Promise<unknown[]> {
  const user = await requireLiveUser(deps.pool, claims);
  return renderUser(user).identities as unknown[];
}

/**
 * Removes one of the user's identities (identity_id), refusing to remove the last one. Like
 * GoTrue, only when manual linking is enabled (SECURITY_MANUAL_LINKING_ENABLED).
 */
export async function unlinkIdentity(
  deps: IdentityDeps,
  claims: AccessTokenClaims,
  identityId: string,
): Promise<void> {
  if (!deps.oauth.manualLinking) throw oauthErrors.manualLinkingDisabled();
  if (!uuid.safeParse(identityId).success) throw identityErrors.notUuid();
  await withService(deps.pool, async (tx) => {
    // The user row is locked so two unlinks at once cannot remove the last two identities.
    await tx.query('select 1 from auth.users where id = $1 for update', [claims.sub]);
    const user = await requireLiveUser(tx, claims);
    if (user.identities.length <= 1) throw identityErrors.lastIdentity();
    const identity = user.identities.find((i) => i.id === identityId);
    if (!identity) throw identityErrors.notFound();
    await tx.query('delete from auth.identities where id = $1 and user_id = $2', [identityId, user.id]);
    await refreshProviders(tx, user.id);
    // app_metadata.provider names the provider of sign-up; if that one is gone, name one that is left.
    await tx.query(
      `update auth.users u set raw_app_meta_data = u.raw_app_meta_data || jsonb_build_object('provider',
         (select i.provider from auth.identities i where i.user_id = u.id order by i.created_at limit 1))
       where u.id = $1 and not exists (select 1 from auth.identities i where i.user_id = u.id
         and i.provider = u.raw_app_meta_data ->> 'provider')`,
      [user.id],
    );
  });
}
