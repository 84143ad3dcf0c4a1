// In charge of turning a provider's word about a person into an account, as GoTrue decides it:
// the identity's own user signs in; a new identity joins the signed-in user who asked to link it,
// or the account whose confirmed address the provider verified; otherwise a new account is
// created. An address the provider did not verify never joins an existing account, and an
// existing account whose address nobody confirmed is not joined as it stands: whatever its
// unproven owner set up (password, other identities, sessions) is removed first.
import type { Tx } from '../../db/transactions.js';
import { authError, errors } from '../errors.js';
import { findUserById, SELECT_USER, type UserWithIdentities } from '../users.js';
import { claimUnprovenAccount } from '../unproven-accounts.js';
import type { ProviderUser } from './protocol.js';

export const accountErrors = {
  needsVerification: (label: string) =>
    authError(
      422,
      'provider_email_needs_verification',
      `Unverified email with ${label}. Verify the email with ${label} in order to sign in`,
    ),
  alreadyLinked: () => authError(422, 'identity_already_exists', 'Identity is already linked'),
  linkedToAnother: () =>
    authError(422, 'identity_already_exists', 'Identity is already linked to another user'),
  noEmail: () => authError(422, 'validation_failed', 'Error getting user email from external provider'),
  linkTargetGone: () => authError(422, 'user_not_found', 'Linking target user not found'),
  banned: () => authError(403, 'user_banned', 'User is banned'),
};

export interface AccountDecisionInput {
  provider: string;
  label: string;
  person: ProviderUser;
  /** the signed-in user who asked to link this identity */
  linkingUserId: string | null;
  autoconfirm: boolean;
  disableSignup: boolean;
}

async function insertIdentity(tx: Tx, userId: string, provider: string, person: ProviderUser): Promise<void> {
  await tx.query(
    `insert into auth.identities (user_id, provider, provider_id, identity_data, last_sign_in_at)
     values ($1, $2, $3, $4, now())`,
    [userId, provider, person.subject, JSON.stringify(person.identityData)],
  );
}

/** app_metadata.providers from the user's identities (GoTrue's UpdateAppMetaDataProviders). */
export async function refreshProviders(tx: Tx, userId: string): Promise<void> {
  await tx.query(
    `update auth.users u set raw_app_meta_data = u.raw_app_meta_data || jsonb_build_object(
       'providers', coalesce((select jsonb_agg(distinct i.provider) from auth.identities i
                              where i.user_id = u.id), '[]'::jsonb)),
       updated_at = now()
     where u.id = $1`,
    [userId],
  );
}

/** The identity's data goes into user_metadata too, as GoTrue does on every provider sign-in. */
async function mergeUserMetadata(tx: Tx, userId: string, person: ProviderUser): Promise<void> {
  await tx.query(
    `update auth.users set raw_user_meta_data = raw_user_meta_data || $2::jsonb, updated_at = now()
     where id = $1`,
    [userId, JSON.stringify(person.identityData)],
  );
}

async function confirmEmail(tx: Tx, userId: string): Promise<void> {
  await tx.query(
    `update auth.users set email_confirmed_at = coalesce(email_confirmed_at, now()), updated_at = now()
     where id = $1`,
    [userId],
  );
}

async function createAccount(tx: Tx, input: AccountDecisionInput, email: string): Promise<string> {
  const inserted = await tx.query<{ id: string }>(
    `insert into auth.users (email, email_confirmed_at, raw_user_meta_data, raw_app_meta_data)
     values ($1, now(), $2, jsonb_build_object('provider', $3::text, 'providers', jsonb_build_array($3::text)))
     returning id`,
    [email, JSON.stringify(input.person.identityData), input.provider],
  );
  const id = inserted.rows[0]!.id;
  await insertIdentity(tx, id, input.provider, input.person);
  return id;
}

/** Decides (and writes) whose account this sign-in is. Runs inside the callback's transaction. */
export async function accountForProviderUser(
  tx: Tx,
  input: AccountDecisionInput,
): Promise<UserWithIdentities> {
  const { person, provider } = input;
  const existing = await tx.query<{ id: string; user_id: string }>(
    'select id, user_id from auth.identities where provider = $1 and provider_id = $2 for update',
    [provider, person.subject],
  );
  const identity = existing.rows[0];
  let userId: string;

  if (input.linkingUserId) {
    if (identity) {
      throw identity.user_id === input.linkingUserId
        ? accountErrors.alreadyLinked()
        : accountErrors.linkedToAnother();
    }
    const target = await findUserById(tx, input.linkingUserId);
    if (!target) throw accountErrors.linkTargetGone();
    await insertIdentity(tx, target.id, provider, person);
    userId = target.id;
  } else if (identity) {
    userId = identity.user_id;
    await tx.query(
      `update auth.identities set identity_data = $2, last_sign_in_at = now(), updated_at = now() where id = $1`,
      [identity.id, JSON.stringify(person.identityData)],
    );
    const user = await findUserById(tx, userId);
    if (user && !user.email_confirmed_at && user.email) {
      if (!person.emailVerified && !input.autoconfirm) throw accountErrors.needsVerification(input.label);
      await confirmEmail(tx, userId);
    }
  } else {
    if (!person.email) throw accountErrors.noEmail();
    const byEmail = await tx.query<UserWithIdentities>(`${SELECT_USER} where u.email = $1 for update of u`, [
      person.email,
    ]);
    const owner = byEmail.rows[0];
    if (owner) {
      // Only an address the provider vouches for may join an existing account.
      if (!person.emailVerified) throw accountErrors.needsVerification(input.label);
      if (!owner.email_confirmed_at) {
        // The provider's word is the first proof of the address: the account is claimed as an
        // e-mail proof claims it (unproven-accounts.ts), its e-mail identity gone too.
        await claimUnprovenAccount(tx, owner.id, { keepEmailIdentity: false });
        await confirmEmail(tx, owner.id);
      }
      await insertIdentity(tx, owner.id, provider, person);
      userId = owner.id;
    } else {
      if (input.disableSignup) throw errors.signupDisabled();
      if (!person.emailVerified && !input.autoconfirm) throw accountErrors.needsVerification(input.label);
      userId = await createAccount(tx, input, person.email);
    }
  }

  // A linked identity leaves the signed-in user's profile as it is.
  if (!input.linkingUserId) await mergeUserMetadata(tx, userId, person);
  await refreshProviders(tx, userId);
  const user = await findUserById(tx, userId);
  if (!user) throw errors.userNotFound();
  if (user.banned_until && new Date(user.banned_until) > new Date()) throw accountErrors.banned();
  return user;
}
