// In charge of accounts known by their phone number: finding one by number, creating one with its
// phone identity (GoTrue's provider "phone"), and what proving the number does to the account.
import type { Queryable } from '../db/pool.js';
import type { Tx } from '../db/transactions.js';
import type { AccountProposal } from './one-time-tokens.js';
import { findUserById, SELECT_USER, type UserWithIdentities } from './users.js';

/** The account whose phone is `phone` (E.164 digits), locked for the caller's transaction. */
export async function findUserByPhone(tx: Queryable, phone: string): Promise<UserWithIdentities | null> {
  const found = await tx.query<UserWithIdentities>(`${SELECT_USER} where u.phone = $1 for update of u`, [
    phone,
  ]);
  return found.rows[0] ?? null;
}

export interface NewPhoneUser {
  phone: string;
  passwordHash: string | null;
  confirmed: boolean;
  userMetadata: Record<string, unknown>;
}

/** Inserts a phone account with its phone identity; null when the number is already registered. */
export async function insertPhoneUser(tx: Tx, input: NewPhoneUser): Promise<UserWithIdentities | null> {
  const inserted = await tx.query<{ id: string }>(
    `insert into auth.users (phone, encrypted_password, phone_confirmed_at, confirmation_sent_at,
       raw_user_meta_data, raw_app_meta_data)
     values ($1, $2, case when $3 then now() end, null, $4,
       '{"provider":"phone","providers":["phone"]}'::jsonb)
     on conflict (phone) do nothing
     returning id`,
    [input.phone, input.passwordHash, input.confirmed, JSON.stringify(input.userMetadata)],
  );
  const id = inserted.rows[0]?.id;
  if (!id) return null;
  await tx.query(
    `insert into auth.identities (user_id, provider, provider_id, identity_data)
     values ($1::uuid, 'phone', $1::text, jsonb_build_object('sub', $1::text, 'phone', $2::text,
       'email_verified', false, 'phone_verified', $3::boolean))`,
    [id, input.phone, input.confirmed],
  );
  return findUserById(tx, id);
}

/**
 * The phone is proved: stamped, its identity marked verified. An account nobody had proved yet
 * (no confirmed phone or address) takes only what the proving code's own flow asked for, so a
 * stranger who signed the number up first leaves no password or profile behind.
 */
export async function confirmPhone(
  tx: Tx,
  user: UserWithIdentities,
  proposal: AccountProposal,
): Promise<void> {
  const unproven = !user.phone_confirmed_at && !user.email_confirmed_at;
  await tx.query(
    `update auth.users set phone_confirmed_at = coalesce(phone_confirmed_at, now()),
       encrypted_password = case when $2 then $3 else encrypted_password end,
       raw_user_meta_data = case when $2 then coalesce($4::jsonb, '{}'::jsonb) else raw_user_meta_data end,
       updated_at = now()
     where id = $1`,
    [
      user.id,
      unproven,
      proposal.passwordHash,
      proposal.userMetadata === null ? null : JSON.stringify(proposal.userMetadata),
    ],
  );
  if (unproven) await tx.query('delete from auth.sessions where user_id = $1', [user.id]);
  await tx.query(
    `update auth.identities set identity_data = identity_data || '{"phone_verified": true}'::jsonb,
       updated_at = now()
     where user_id = $1 and provider = 'phone'`,
    [user.id],
  );
}

/** A confirmed phone change: the new number becomes the account's (and its identity's). */
export async function completePhoneChange(tx: Tx, userId: string, phone: string): Promise<void> {
  await tx.query(
    `update auth.users set phone = $2, phone_confirmed_at = now(), phone_change = '',
       phone_change_sent_at = null, updated_at = now()
     where id = $1`,
    [userId, phone],
  );
  const identity = await tx.query(
    `update auth.identities set identity_data = identity_data || jsonb_build_object('phone', $2::text,
       'phone_verified', true), updated_at = now()
     where user_id = $1 and provider = 'phone'`,
    [userId, phone],
  );
  if (!identity.rowCount) {
    await tx.query(
      `insert into auth.identities (user_id, provider, provider_id, identity_data)
       values ($1::uuid, 'phone', $1::text, jsonb_build_object('sub', $1::text, 'phone', $2::text,
         'email_verified', false, 'phone_verified', true))`,
      [userId, phone],
    );
    await tx.query(
      `update auth.users set raw_app_meta_data = jsonb_set(raw_app_meta_data, '{providers}',
         coalesce(raw_app_meta_data->'providers', '[]'::jsonb) || '["phone"]'::jsonb)
       where id = $1 and not coalesce(raw_app_meta_data->'providers', '[]'::jsonb) ? 'phone'`,
      [userId],
    );
  }
}
