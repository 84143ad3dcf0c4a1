-- TOTP second factors, GoTrue's shape: auth.mfa_factors and auth.mfa_challenges, recovery codes
-- for the web app, and the factor that raised a session to aal2 (auth.sessions.factor_id).
-- See docs/decisions/0024-totp-factors.md.
--
-- A factor's secret is AES-GCM ciphertext made by the service (the key never reaches the
-- database); last_used_step is the TOTP time step of the last accepted code, so a code is
-- accepted once. Recovery codes are kept only as keyed hashes.

create table auth.mfa_factors (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  friendly_name text,
  factor_type text not null check (factor_type = 'totp'),
  status text not null default 'unverified' check (status in ('unverified', 'verified')),
  secret text not null,
  last_used_step bigint,
  last_challenged_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index mfa_factors_user_idx on auth.mfa_factors (user_id, created_at);
-- GoTrue refuses a second factor with the same friendly name (mfa_factor_name_conflict).
create unique index mfa_factors_user_friendly_name_idx on auth.mfa_factors (user_id, friendly_name)
  where friendly_name is not null and friendly_name <> '';

create table auth.mfa_challenges (
  id uuid primary key default gen_random_uuid(),
  factor_id uuid not null references auth.mfa_factors (id) on delete cascade,
  ip_address inet,
  created_at timestamptz not null default now(),
  verified_at timestamptz
);
create index mfa_challenges_factor_idx on auth.mfa_challenges (factor_id);

create table auth.mfa_recovery_codes (
  id bigserial primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  code_hash bytea not null,
  used_at timestamptz,
  created_at timestamptz not null default now(),
  unique (user_id, code_hash)
);

alter table auth.sessions
  add column factor_id uuid references auth.mfa_factors (id) on delete set null;

revoke all on auth.mfa_factors, auth.mfa_challenges, auth.mfa_recovery_codes from anon, authenticated;
revoke all on sequence auth.mfa_recovery_codes_id_seq from anon, authenticated;
