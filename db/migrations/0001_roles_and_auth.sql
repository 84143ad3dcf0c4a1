-- Supabase-style request roles, the auth schema (users, identities, sessions, refresh tokens)
-- and the auth.uid()/auth.role()/auth.jwt() helpers that policies use.

-- Roles are cluster-wide: several databases (and concurrent test runs) may race to create them.
do $$
declare
  r text;
begin
  foreach r in array array['anon', 'authenticated', 'service_role'] loop
    if not exists (select 1 from pg_roles where rolname = r) then
      begin
        execute format('create role %I nologin noinherit', r);
      exception when duplicate_object or unique_violation then
        null;
      end;
    end if;
  end loop;
end
$$;
-- The service role bypasses row-level security (the operator's own back end). Changing the
-- attribute takes a superuser on PostgreSQL 15 (and BYPASSRLS plus ADMIN on the role from 16), so
-- it is changed only when it is not already right; when the connected role cannot change it, the
-- service names the one statement an administrator runs (src/server/db/preflight.ts).
do $$
begin
  if not (select rolbypassrls from pg_roles where rolname = 'service_role') then
    alter role service_role bypassrls;
  end if;
exception when insufficient_privilege then
  raise warning 'service_role needs BYPASSRLS: run once as an administrator: alter role service_role bypassrls';
end
$$;

-- The application's login role must be able to SET ROLE to each request role.
do $$
begin
  if not (select rolsuper from pg_roles where rolname = current_user) then
    execute format('grant anon, authenticated, service_role to %I', current_user);
  end if;
end
$$;

-- Nothing reaches the public schema by default; each exposed table grants what it needs.
revoke create on schema public from public;
grant usage on schema public to anon, authenticated, service_role;
-- The operations in public are owned by service_role too (see internal below for why).
grant create on schema public to service_role;

create schema if not exists auth;
grant usage on schema auth to anon, authenticated, service_role;

-- Internal bookkeeping (rate limits, migrations, later the outbox and ledgers) is invisible to clients.
create schema if not exists internal;
revoke all on schema internal from public;
-- Security-definer helpers are owned by service_role, never by the installing role; a role that
-- is not a superuser can hand a function to an owner only when that owner may create in its schema.
grant create on schema internal to service_role;

create or replace function auth.jwt() returns jsonb
language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim', true), ''),
    nullif(current_setting('request.jwt.claims', true), '')
  )::jsonb
$$;

create or replace function auth.uid() returns uuid
language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.sub', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'sub')
  )::uuid
$$;

create or replace function auth.role() returns text
language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.role', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'role')
  )::text
$$;

create or replace function auth.email() returns text
language sql stable
as $$
  select coalesce(
    nullif(current_setting('request.jwt.claim.email', true), ''),
    (nullif(current_setting('request.jwt.claims', true), '')::jsonb ->> 'email')
  )::text
$$;

grant execute on function auth.jwt(), auth.uid(), auth.role(), auth.email()
  to anon, authenticated, service_role;

create table auth.users (
  id uuid primary key default gen_random_uuid(),
  aud text not null default 'authenticated',
  role text not null default 'authenticated',
  email text unique check (email = lower(email)),
  phone text unique,
  encrypted_password text,
  email_confirmed_at timestamptz,
  invited_at timestamptz,
  confirmation_sent_at timestamptz,
  last_sign_in_at timestamptz,
  raw_app_meta_data jsonb not null default '{"provider":"email","providers":["email"]}',
  raw_user_meta_data jsonb not null default '{}',
  banned_until timestamptz,
  is_anonymous boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table auth.identities (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  provider text not null,
  provider_id text not null,
  identity_data jsonb not null default '{}',
  last_sign_in_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (provider, provider_id)
);
create index identities_user_id_idx on auth.identities (user_id);

create table auth.sessions (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  aal text not null default 'aal1',
  amr jsonb not null default '[]',
  user_agent text,
  ip inet,
  refreshed_at timestamptz,
  not_after timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index sessions_user_id_idx on auth.sessions (user_id);

-- Refresh tokens are stored only as SHA-256 hashes; a child token is derived from its parent
-- with a server key (see src/server/identity/refresh-tokens.ts), so a retried refresh can be
-- answered with the same child without ever storing a usable token.
create table auth.refresh_tokens (
  id bigserial primary key,
  token_hash bytea not null unique,
  session_id uuid not null references auth.sessions (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  parent_id bigint references auth.refresh_tokens (id) on delete set null,
  revoked boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index refresh_tokens_session_idx on auth.refresh_tokens (session_id) where not revoked;
create index refresh_tokens_parent_idx on auth.refresh_tokens (parent_id);

-- Clients never touch the auth tables directly; the identity service works through withService.
revoke all on all tables in schema auth from anon, authenticated;
revoke all on all sequences in schema auth from anon, authenticated;

-- Fixed-window counters shared by every instance.
create table internal.rate_limits (
  bucket text not null,
  window_start timestamptz not null,
  hits integer not null,
  primary key (bucket, window_start)
);

-- One round trip for the whole refresh rotation, with a fixed lock order (the session row first)
-- so concurrent refreshes of one session serialise and sign-out cannot deadlock with them.
-- p_child_hash is the hash of the child derived from the presented token (see refresh-tokens.ts).
-- Outcomes: rotated (new child stored), replayed (the presented token is the parent of the
-- active token: hand the same child out again), expired, not_found, reuse_detected (session ended).
create function auth.rotate_refresh_token(p_hash bytea, p_child_hash bytea, p_ttl_seconds integer)
returns table (outcome text, session_id uuid, user_id uuid, aal text, amr jsonb)
language plpgsql
set search_path = ''
as $$
declare
  v_token_id bigint;
  v_session uuid;
  v_user uuid;
  v_revoked boolean;
  v_expired boolean;
begin
  select t.id, t.session_id into v_token_id, v_session
  from auth.refresh_tokens t where t.token_hash = p_hash;
  if v_token_id is null then
    return query select 'not_found', null::uuid, null::uuid, null::text, null::jsonb;
    return;
  end if;

  perform 1 from auth.sessions s where s.id = v_session for update;
  if not found then
    return query select 'not_found', null::uuid, null::uuid, null::text, null::jsonb;
    return;
  end if;

  -- A new statement after the lock: sees any rotation committed while we waited.
  select t.revoked, t.updated_at < now() - make_interval(secs => p_ttl_seconds), t.user_id
    into v_revoked, v_expired, v_user
  from auth.refresh_tokens t where t.id = v_token_id;
  if v_revoked is null then
    return query select 'not_found', null::uuid, null::uuid, null::text, null::jsonb;
    return;
  end if;

  if not v_revoked then
    if v_expired then
      return query select 'expired', v_session, v_user, null::text, null::jsonb;
      return;
    end if;
    update auth.refresh_tokens set revoked = true, updated_at = now() where id = v_token_id;
    insert into auth.refresh_tokens (token_hash, session_id, user_id, parent_id)
      values (p_child_hash, v_session, v_user, v_token_id);
    update auth.sessions set refreshed_at = now(), updated_at = now() where id = v_session;
    return query select 'rotated', s.id, v_user, s.aal, s.amr from auth.sessions s where s.id = v_session;
    return;
  end if;

  if exists (select 1 from auth.refresh_tokens c
             where c.parent_id = v_token_id and c.token_hash = p_child_hash and not c.revoked) then
    return query select 'replayed', s.id, v_user, s.aal, s.amr from auth.sessions s where s.id = v_session;
    return;
  end if;

  delete from auth.sessions where id = v_session;
  return query select 'reuse_detected', v_session, v_user, null::text, null::jsonb;
end
$$;
revoke all on function auth.rotate_refresh_token(bytea, bytea, integer) from public;
