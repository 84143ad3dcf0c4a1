-- Passkeys (GoTrue's /passkeys family) and WebAuthn second factors (factor_type 'webauthn' of
-- /factors): credentials, the challenges of their ceremonies, and what clears them with the
-- account. See docs/decisions/0090-passkeys.md.
--
-- A credential keeps what verifying its assertions needs (its id, COSE public key, signature
-- counter) and what the Security page shows (a friendly name, the authenticator's AAGUID, its
-- transports, when it was last used). A credential id is registered once across all users, so an
-- assertion names exactly one account.

create table auth.webauthn_credentials (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  credential_id bytea not null,
  public_key bytea not null,
  attestation_type text not null default '',
  aaguid uuid,
  sign_count bigint not null default 0 check (sign_count between 0 and 4294967295),
  transports jsonb not null default '[]' check (jsonb_typeof(transports) = 'array'),
  backup_eligible boolean not null default false,
  backed_up boolean not null default false,
  friendly_name text not null default '' check (char_length(friendly_name) <= 120),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  last_used_at timestamptz
);
create unique index webauthn_credentials_credential_id_key on auth.webauthn_credentials (credential_id);
create index webauthn_credentials_user_idx on auth.webauthn_credentials (user_id, created_at);

-- A ceremony's challenge, used once: verification deletes the row it reads, so a replay finds
-- nothing. A registration is bound to its user; a passkey sign-in has none (the credential names
-- the account). Expired rows are swept when new challenges are made.
create table auth.webauthn_challenges (
  id uuid primary key default gen_random_uuid(),
  user_id uuid references auth.users (id) on delete cascade,
  challenge_type text not null check (challenge_type in ('registration', 'authentication')),
  challenge text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index webauthn_challenges_user_idx on auth.webauthn_challenges (user_id);
create index webauthn_challenges_expires_idx on auth.webauthn_challenges (expires_at);

-- WebAuthn factors: no TOTP secret; the credential the factor's first verification registered.
alter table auth.mfa_factors drop constraint mfa_factors_factor_type_check;
alter table auth.mfa_factors
  add constraint mfa_factors_factor_type_check check (factor_type in ('totp', 'webauthn')),
  alter column secret drop not null,
  add constraint mfa_factors_totp_secret check (factor_type <> 'totp' or secret is not null),
  add column web_authn_credential_id bytea,
  add column web_authn_public_key bytea,
  add column web_authn_sign_count bigint check (web_authn_sign_count between 0 and 4294967295),
  add column web_authn_transports jsonb,
  add column web_authn_aaguid uuid;
create unique index mfa_factors_web_authn_credential_key on auth.mfa_factors (web_authn_credential_id)
  where web_authn_credential_id is not null;

-- A WebAuthn factor's challenge carries the ceremony's random challenge and its kind: 'create'
-- while the factor is unverified (its credential is registered), 'request' after (an assertion).
alter table auth.mfa_challenges
  add column web_authn_challenge text,
  add column web_authn_type text check (web_authn_type in ('create', 'request'));

revoke all on auth.webauthn_credentials, auth.webauthn_challenges from anon, authenticated;

-- A deleted account, and an unproven one claimed by whoever proves its address, keep no passkey:
-- the two functions that clear an account (migrations 0041 and 0047) now clear its passkeys too.
create or replace function auth.soft_delete_user(p_user uuid) returns text
language plpgsql set search_path = ''
as $$
declare
  v_deleted_at timestamptz;
begin
  select u.deleted_at into v_deleted_at from auth.users u where u.id = p_user for update;
  if not found then
    return 'not_found';
  elsif v_deleted_at is not null then
    return 'already_deleted';
  end if;

  perform internal.release_workspaces(p_user);

  update auth.users u set
    email = case when u.email is null then null else internal.obfuscated(u.id, u.email) end,
    phone = case when u.phone is null then null else left(internal.obfuscated(u.id, u.phone), 15) end,
    email_change = case when u.email_change is null then null else internal.obfuscated(u.id, u.email_change) end,
    email_change_confirm_status = 0,
    encrypted_password = null,
    raw_user_meta_data = '{}',
    raw_app_meta_data = '{}',
    deleted_at = now(),
    updated_at = now()
  where u.id = p_user;

  update auth.identities i set
    identity_data = '{}',
    provider_id = internal.obfuscated(i.user_id, i.provider || ':' || i.provider_id),
    updated_at = now()
  where i.user_id = p_user;

  delete from auth.sessions where user_id = p_user;
  delete from auth.refresh_tokens where user_id = p_user;
  delete from auth.mfa_factors where user_id = p_user;
  delete from auth.webauthn_credentials where user_id = p_user;
  delete from auth.webauthn_challenges where user_id = p_user;
  delete from auth.mfa_recovery_codes where user_id = p_user;
  delete from auth.one_time_tokens where user_id = p_user;
  delete from auth.flow_state where user_id = p_user;
  delete from auth.oauth_states where linking_user_id = p_user;

  -- The profile keeps its row for the app's references, not the person's name or picture, and
  -- no digest goes to an address that no longer exists.
  update public.profiles set display_name = null, avatar_url = null where id = p_user;
  update public.notification_preferences set digest_frequency = 'off' where user_id = p_user;
  return 'deleted';
end
$$;

create or replace function auth.claim_unproven_account(
  p_user_id uuid,
  p_password_hash text,
  p_user_metadata jsonb,
  p_keep_email_identity boolean,
  p_keep_flow_state uuid
) returns boolean
language plpgsql set search_path = ''
as $$
declare
  v_email text;
  v_metadata jsonb := coalesce(p_user_metadata, '{}'::jsonb);
begin
  update auth.users set
    encrypted_password = p_password_hash,
    raw_user_meta_data = v_metadata,
    email_change = null,
    email_change_confirm_status = 0,
    email_change_sent_at = null,
    updated_at = now()
  where id = p_user_id and email_confirmed_at is null
  returning email into v_email;
  if not found then
    return false;
  end if;

  delete from auth.identities
  where user_id = p_user_id and not (p_keep_email_identity and provider = 'email');
  update auth.identities set
    identity_data = jsonb_build_object('sub', provider_id, 'email', v_email,
                                       'email_verified', false, 'phone_verified', false),
    updated_at = now()
  where user_id = p_user_id and provider = 'email';
  update auth.users u set raw_app_meta_data = u.raw_app_meta_data || jsonb_build_object(
    'providers', coalesce((select jsonb_agg(distinct i.provider) from auth.identities i
                           where i.user_id = u.id), '[]'::jsonb))
  where u.id = p_user_id;

  -- Sessions take their refresh tokens with them (on delete cascade), factors their challenges.
  delete from auth.sessions where user_id = p_user_id;
  delete from auth.mfa_factors where user_id = p_user_id;
  delete from auth.webauthn_credentials where user_id = p_user_id;
  delete from auth.webauthn_challenges where user_id = p_user_id;
  delete from auth.mfa_recovery_codes where user_id = p_user_id;
  delete from auth.one_time_tokens where user_id = p_user_id;
  delete from auth.flow_state where user_id = p_user_id and id is distinct from p_keep_flow_state;
  delete from auth.oauth_states where linking_user_id = p_user_id;

  -- The profile was filled from the creator's sign-up data (internal.on_user_created).
  update public.profiles set
    display_name = nullif(left(coalesce(v_metadata ->> 'display_name', v_metadata ->> 'full_name', ''), 100), ''),
    avatar_url = null
  where id = p_user_id;
  return true;
end
$$;
