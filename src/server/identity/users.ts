// In charge of the auth.users and auth.identities rows: reading, creating and changing users,
// and rendering a user in the exact JSON shape GoTrue returns (what supabase-js reads).
import type { Queryable } from '../db/pool.js';
import type { Tx } from '../db/transactions.js';

export interface UserRow {
  id: string;
  aud: string;
  role: string;
  email: string | null;
  phone: string | null;
  encrypted_password: string | null;
  email_confirmed_at: Date | null;
  /** when an SMS code proved the phone (absent where a query does not load it) */
  phone_confirmed_at?: Date | null;
  /** the number of a pending phone change ('' when none; new_phone in the JSON) */
  phone_change?: string | null;
  phone_change_sent_at?: Date | null;
  invited_at: Date | null;
  confirmation_sent_at: Date | null;
  recovery_sent_at: Date | null;
  /** the address of a pending e-mail change (new_email in the JSON) */
  email_change: string | null;
  email_change_sent_at: Date | null;
  email_change_confirm_status: number;
  reauthentication_sent_at: Date | null;
  last_sign_in_at: Date | null;
  raw_app_meta_data: Record<string, unknown>;
  raw_user_meta_data: Record<string, unknown>;
  banned_until: Date | null;
  is_anonymous: boolean;
  /** set by a soft deletion: the row stays for the references to it, the person is gone */
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface IdentityRow {
  id: string;
  user_id: string;
  provider: string;
  provider_id: string;
  identity_data: Record<string, unknown>;
  last_sign_in_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface UserWithIdentities extends UserRow {
  identities: IdentityRow[];
  /** second factors in GoTrue's JSON shape (absent where a query does not load them) */
  factors?: Record<string, unknown>[];
}

// The factors' JSON is defined once, in SQL (migration 0040), for these reads and the refresh grant.
const FACTORS = `auth.user_factors_json(u.id) as factors`;

const USER_COLUMNS = `u.id, u.aud, u.role, u.email, u.phone, u.encrypted_password, u.email_confirmed_at,
  u.phone_confirmed_at, u.phone_change, u.phone_change_sent_at,
  u.invited_at, u.confirmation_sent_at, u.recovery_sent_at, u.email_change, u.email_change_sent_at,
  u.email_change_confirm_status, u.reauthentication_sent_at, u.last_sign_in_at, u.raw_app_meta_data,
  u.raw_user_meta_data, u.banned_until, u.is_anonymous, u.deleted_at, u.created_at, u.updated_at`;

// The user's second factors ride along with the identities (GoTrue lists them in the user JSON).
const IDENTITIES = `coalesce((select json_agg(i order by i.created_at) from auth.identities i
  where i.user_id = u.id), '[]') as identities, ${FACTORS}`;

/** A user with identities, for statements that fold the lookup into a larger query: add a where on u. */
export const SELECT_USER = `select ${USER_COLUMNS}, ${IDENTITIES} from auth.users u`;

/** Trimmed and lower-cased: one account per mailbox however the address is typed. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

function iso(value: Date | string | null): string | undefined {
  if (value === null) return undefined;
  return new Date(value).toISOString();
}

export function isBanned(user: UserRow, now = new Date()): boolean {
  return user.banned_until !== null && new Date(user.banned_until) > now;
}

/** The GoTrue user object: optional timestamps are left out when null, email/phone are "" when absent. */
export function renderUser(user: UserWithIdentities): Record<string, unknown> {
  const optional: Record<string, string | undefined> = {
    email_confirmed_at: iso(user.email_confirmed_at),
    phone_confirmed_at: iso(user.phone_confirmed_at ?? null),
    // GoTrue's confirmed_at: the first of the address and the phone to be proved.
    confirmed_at: iso(user.email_confirmed_at ?? user.phone_confirmed_at ?? null),
    invited_at: iso(user.invited_at),
    confirmation_sent_at: iso(user.confirmation_sent_at),
    recovery_sent_at: iso(user.recovery_sent_at),
    new_email: user.email_change ?? undefined,
    new_phone: user.phone_change || undefined,
    phone_change_sent_at: iso(user.phone_change_sent_at ?? null),
    email_change_sent_at: iso(user.email_change_sent_at),
    reauthentication_sent_at: iso(user.reauthentication_sent_at),
    last_sign_in_at: iso(user.last_sign_in_at),
    banned_until: iso(user.banned_until),
  };
  const present = Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined));
  return {
    id: user.id,
    aud: user.aud,
    role: user.role,
    email: user.email ?? '',
    phone: user.phone ?? '',
    ...present,
    app_metadata: user.raw_app_meta_data,
    user_metadata: user.raw_user_meta_data,
    identities: user.identities.map((i) => ({
      identity_id: i.id,
      id: i.provider_id,
      user_id: i.user_id,
      identity_data: i.identity_data,
      provider: i.provider,
      last_sign_in_at: iso(i.last_sign_in_at),
      created_at: iso(i.created_at),
      updated_at: iso(i.updated_at),
      email: typeof i.identity_data.email === 'string' ? i.identity_data.email : undefined,
    })),
    created_at: iso(user.created_at),
    updated_at: iso(user.updated_at),
    ...(user.deleted_at ? { deleted_at: iso(user.deleted_at) } : {}),
    is_anonymous: user.is_anonymous,
    ...(user.factors?.length ? { factors: user.factors } : {}),
  };
}

/**
 * A user read as JSON (the whole row, `to_json(u)`, beside its identities) with its factors: the
 * row's and identities' timestamps arrive as ISO strings and become Dates as pg would make them, so
 * columns added later keep flowing through. The factors are already in GoTrue's shape
 * (auth.user_factors_json) and pass through as they are, as they do from SELECT_USER.
 */
export function userFromJson(
  json: { row: Record<string, unknown>; identities: unknown[] | null },
  factors: Record<string, unknown>[],
): UserWithIdentities {
  const user = withDates(json.row) as unknown as UserRow;
  const identities = (json.identities ?? []) as Record<string, unknown>[];
  return { ...user, identities: identities.map(withDates) as unknown as IdentityRow[], factors };
}

function withDates(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    out[key] = typeof value === 'string' && /_(at|until)$/.test(key) ? new Date(value) : value;
  }
  return out;
}

/** Whether the account is a workspace API key's principal (decision 0091), not a person. */
export async function isKeyPrincipal(tx: Queryable, id: string): Promise<boolean> {
  const found = await tx.query('select 1 from internal.api_keys where id = $1', [id]);
  return (found.rowCount ?? 0) > 0;
}

export async function findUserById(tx: Queryable, id: string): Promise<UserWithIdentities | null> {
  const result = await tx.query<UserWithIdentities>(
    `select ${USER_COLUMNS}, ${IDENTITIES} from auth.users u where u.id = $1`,
    [id],
  );
  return result.rows[0] ?? null;
}

export interface NewUser {
  /** a chosen id (the admin API's); a fresh one otherwise */
  id?: string;
  /** banned from the start until then (the admin API's ban_duration) */
  bannedUntil?: Date;
  email: string;
  passwordHash: string | null;
  confirmed: boolean;
  invited?: boolean;
  userMetadata?: Record<string, unknown>;
  appMetadata?: Record<string, unknown>;
}

/** Inserts a user with its e-mail identity. Returns null when the e-mail is already registered. */
export async function insertUser(tx: Tx, input: NewUser): Promise<UserWithIdentities | null> {
  const email = normalizeEmail(input.email);
  const inserted = await tx.query<{ id: string }>(
    `insert into auth.users (id, email, encrypted_password, email_confirmed_at, invited_at,
       confirmation_sent_at, raw_user_meta_data, raw_app_meta_data, banned_until)
     values (coalesce($7::uuid, gen_random_uuid()), $1, $2, case when $3 then now() end,
       case when $4 then now() end, case when not $3 then now() end, $5,
       '{"provider":"email","providers":["email"]}'::jsonb || $6::jsonb, $8)
     on conflict (email) do nothing
     returning id`,
    [
      email,
      input.passwordHash,
      input.confirmed,
      input.invited ?? false,
      JSON.stringify(input.userMetadata ?? {}),
      JSON.stringify(input.appMetadata ?? {}),
      input.id ?? null,
      input.bannedUntil ?? null,
    ],
  );
  const id = inserted.rows[0]?.id;
  if (!id) return null;
  await tx.query(
    `insert into auth.identities (user_id, provider, provider_id, identity_data)
     values ($1::uuid, 'email', $2::text, jsonb_build_object('sub', $2::text, 'email', $3::text,
       'email_verified', $4::boolean, 'phone_verified', false))`,
    [id, id, email, input.confirmed],
  );
  return findUserById(tx, id);
}

export interface UserChanges {
  email?: string;
  passwordHash?: string;
  confirm?: boolean;
  userMetadata?: Record<string, unknown>;
  appMetadata?: Record<string, unknown>;
  bannedUntil?: Date | null;
}

/**
 * Applies changes. Metadata is merged key by key and a top-level null removes its key; nulls deeper
 * down are values like any other (GoTrue's rule).
 * Returns false when the new e-mail belongs to another user.
 */
export async function updateUser(tx: Tx, id: string, changes: UserChanges): Promise<boolean> {
  try {
    await tx.query('savepoint update_user');
    await tx.query(
      `update auth.users set
         email = coalesce($2, email),
         encrypted_password = coalesce($3, encrypted_password),
         email_confirmed_at = case when $4 then coalesce(email_confirmed_at, now()) else email_confirmed_at end,
         raw_user_meta_data = case when $5::jsonb is null then raw_user_meta_data
           else (raw_user_meta_data || $5::jsonb) - array(select k from jsonb_each($5::jsonb) e(k, v) where v = 'null') end,
         raw_app_meta_data = case when $6::jsonb is null then raw_app_meta_data
           else (raw_app_meta_data || $6::jsonb) - array(select k from jsonb_each($6::jsonb) e(k, v) where v = 'null') end,
         banned_until = case when $7 then $8::timestamptz else banned_until end,
         updated_at = now()
       where id = $1`,
      [
        id,
        changes.email === undefined ? null : normalizeEmail(changes.email),
        changes.passwordHash ?? null,
        changes.confirm ?? false,
        changes.userMetadata === undefined ? null : JSON.stringify(changes.userMetadata),
        changes.appMetadata === undefined ? null : JSON.stringify(changes.appMetadata),
        changes.bannedUntil !== undefined,
        changes.bannedUntil ?? null,
      ],
    );
    await tx.query('release savepoint update_user');
  } catch (error) {
    if ((error as { code?: string }).code === '23505') {
      await tx.query('rollback to savepoint update_user');
      return false;
    }
    throw error;
  }
  if (changes.email !== undefined) {
    await tx.query(
      `update auth.identities set identity_data = identity_data || jsonb_build_object('email', $2::text),
         updated_at = now() where user_id = $1 and provider = 'email'`,
      [id, normalizeEmail(changes.email)],
    );
  }
  return true;
}

export async function deleteUser(tx: Tx, id: string): Promise<boolean> {
  const result = await tx.query('delete from auth.users where id = $1', [id]);
  return (result.rowCount ?? 0) > 0;
}

/** Replaces a stored hash by a new hash of the same password, if it is still the stored one. */
export async function replacePasswordHash(
  tx: Tx,
  id: string,
  storedHash: string,
  newHash: string,
): Promise<void> {
  await tx.query('update auth.users set encrypted_password = $3 where id = $1 and encrypted_password = $2', [
    id,
    storedHash,
    newHash,
  ]);
}

/**
 * GoTrue's soft deletion (auth.soft_delete_user, migration 0041): false when there is no such
 * user; deleting an already deleted user again changes nothing.
 */
export async function softDeleteUser(tx: Tx, id: string): Promise<boolean> {
  const result = await tx.query<{ outcome: string }>('select auth.soft_delete_user($1) as outcome', [id]);
  return result.rows[0]?.outcome !== 'not_found';
}

/**
 * A page of accounts for the admin API, newest first. Workspace API keys' principals are left out:
 * they are keys, managed by their workspace, not people an administrator looks after.
 */
export async function listUsers(
  tx: Tx,
  page: number,
  perPage: number,
): Promise<{ users: UserWithIdentities[]; total: number }> {
  const rows = await tx.query<UserWithIdentities>(
    `select ${USER_COLUMNS}, ${IDENTITIES} from auth.users u
     where not exists (select 1 from internal.api_keys k where k.id = u.id)
     order by u.created_at desc, u.id desc limit $1 offset $2`,
    [perPage, (page - 1) * perPage],
  );
  const count = await tx.query<{ total: string }>(
    `select count(*) as total from auth.users u
     where not exists (select 1 from internal.api_keys k where k.id = u.id)`,
  );
  return { users: rows.rows, total: Number(count.rows[0]?.total ?? 0) };
}
