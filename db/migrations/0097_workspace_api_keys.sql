-- Workspace API keys (decision 0091): a secret a workspace's owners and admins hand to a program,
-- which then acts in that one workspace, with the key's role, under the same row-level security as
-- a signed-in member.
--
-- Each key has its own principal: an auth.users row whose id is the key's id, never a member of
-- any workspace and never able to sign in (no password, no identity). A request with the key runs
-- as that principal (sub = the key's id, role authenticated), so policies that compare with
-- auth.uid() (a person's own profile, own membership, own audit lines) match nothing of the
-- creator's, and the tenancy API answers for the key: its one workspace, at the lesser of the
-- key's role and its creator's current role, while the key is neither revoked nor expired.
--
-- The secret: 'tnt_' || 16 hex characters (the lookup id, public, shown in lists) || 43 base64url
-- characters (32 random bytes). Only its SHA-256 is kept; for a secret of 256 random bits a fast
-- hash is enough (nothing to brute-force), and the service compares it in constant time.

create table internal.api_keys (
  id uuid primary key references auth.users (id) on delete cascade,
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  lookup text not null unique check (lookup ~ '^[0-9a-f]{16}$'),
  secret_hash bytea not null check (octet_length(secret_hash) = 32),
  name text not null check (char_length(name) between 1 and 100),
  role public.workspace_role not null,
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  expires_at timestamptz,
  last_used_at timestamptz,
  revoked_at timestamptz,
  revoked_by uuid
);
create index api_keys_workspace_idx on internal.api_keys (workspace_id, created_at desc);
create index api_keys_created_by_idx on internal.api_keys (created_by);

-- Kept out of the exposed schema: clients reach keys only through the functions below.
revoke all on internal.api_keys from public, anon, authenticated, service_role;
grant select, insert, update (last_used_at, revoked_at, revoked_by) on internal.api_keys to service_role;
-- The definers below create a key's principal and shut it out on revocation.
grant insert, update (banned_until) on auth.users to service_role;

-- Whether an account is a key's principal (require_user runs as its caller, who cannot read keys).
create function internal.is_api_key(user_id uuid) returns boolean
language sql stable security definer set search_path = ''
as $$
  select exists (select 1 from internal.api_keys k where k.id = is_api_key.user_id)
$$;
alter function internal.is_api_key(uuid) owner to service_role;
revoke all on function internal.is_api_key(uuid) from public;
grant execute on function internal.is_api_key(uuid) to authenticated, service_role;

-- The tenancy API (0060) answers for keys too: a key reaches its one workspace at the lesser of its
-- role and its creator's present role (a creator demoted or removed takes the key down with them).
create or replace function tenantry.workspace_ids(min_role public.workspace_role default 'viewer')
returns uuid[]
language sql stable security definer set search_path = ''
as $$
  select case when (select internal.caller_standing()) <> 'active' then '{}'::uuid[] else (
    select coalesce(array_agg(x.workspace_id), '{}') from (
      select m.workspace_id from public.workspace_members m
      where m.user_id = (select auth.uid()) and m.role >= min_role
        and ((select coalesce(auth.jwt()->>'aal', '') = 'aal2')
             or not exists (select 1 from public.workspaces w where w.id = m.workspace_id and w.require_mfa))
      union all
      -- The key's lookup is written out rather than called, so a statement still pays one call.
      select k.workspace_id from internal.api_keys k
      join public.workspace_members m on m.workspace_id = k.workspace_id and m.user_id = k.created_by
      where k.id = (select auth.uid()) and k.revoked_at is null
        and (k.expires_at is null or k.expires_at > now())
        and least(k.role, m.role) >= min_role
        and not exists (select 1 from public.workspaces w where w.id = k.workspace_id and w.require_mfa)
    ) x) end
$$;

create or replace function tenantry.role(workspace_id uuid) returns public.workspace_role
language sql stable security definer set search_path = ''
as $$
  select case when (select internal.caller_standing()) = 'active' then coalesce(
    (select m.role from public.workspace_members m
     where m.workspace_id = role.workspace_id and m.user_id = (select auth.uid())
       and ((select coalesce(auth.jwt()->>'aal', '') = 'aal2')
            or not exists (select 1 from public.workspaces w where w.id = m.workspace_id and w.require_mfa))),
    (select least(k.role, m.role) from internal.api_keys k
     join public.workspace_members m on m.workspace_id = k.workspace_id and m.user_id = k.created_by
     where k.id = (select auth.uid()) and k.workspace_id = role.workspace_id and k.revoked_at is null
       and (k.expires_at is null or k.expires_at > now())
       and not exists (select 1 from public.workspaces w where w.id = k.workspace_id and w.require_mfa)))
  end
$$;

-- What only a person may do (create workspaces, invite, accept invitations, manage keys...) calls
-- internal.require_user first: a key's principal is refused there, so a key never gains a
-- workspace, a membership or another key beyond the one it was made for.
create or replace function internal.require_user() returns uuid
language plpgsql stable set search_path = ''
as $$
declare
  uid uuid := auth.uid();
begin
  if uid is null then
    raise exception 'Sign in first' using errcode = '42501';
  end if;
  perform internal.require_active_caller();
  if internal.is_api_key(uid) then
    raise exception 'An API key cannot do this: sign in as a person' using errcode = '42501';
  end if;
  return uid;
end
$$;

create function internal.api_key_facts(k internal.api_keys) returns jsonb
language sql immutable set search_path = ''
as $$
  select jsonb_build_object('id', k.id, 'name', k.name, 'role', k.role,
    'prefix', 'tnt_' || k.lookup, 'created_by', k.created_by, 'created_at', k.created_at,
    'expires_at', k.expires_at, 'last_used_at', k.last_used_at, 'revoked_at', k.revoked_at)
$$;

-- Creates a key; its secret is in the answer ('key') and nowhere else, ever.
create function public.create_api_key(workspace_id uuid, name text, role public.workspace_role,
  expires_at timestamptz default null) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  mine public.workspace_role := tenantry.role(create_api_key.workspace_id);
  clean text := btrim(coalesce(create_api_key.name, ''));
  key_id uuid := gen_random_uuid();
  lookup text := encode(substring(uuid_send(gen_random_uuid()) from 1 for 8), 'hex');
  -- 32 bytes from PostgreSQL's strong random source (gen_random_uuid), 366 random bits hashed.
  secret text := rtrim(translate(encode(sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())
    || uuid_send(gen_random_uuid())), 'base64'), '+/', '-_'), '=');
  full_key text := 'tnt_' || lookup || secret;
  created internal.api_keys;
begin
  if mine is null then
    raise exception 'Workspace not found' using errcode = 'PT404';
  end if;
  if mine < 'admin' then
    raise exception 'Only owners and admins manage API keys' using errcode = '42501';
  end if;
  if create_api_key.role is null then
    raise exception 'A key needs a role' using errcode = '22023';
  end if;
  if create_api_key.role > mine then
    raise exception 'A key''s role cannot be above your own (%)', mine using errcode = '42501';
  end if;
  if char_length(clean) < 1 or char_length(clean) > 100 then
    raise exception 'A key needs a name of 1 to 100 characters' using errcode = '22023';
  end if;
  if create_api_key.expires_at is not null and create_api_key.expires_at <= now() then
    raise exception 'A key''s expiry must be in the future' using errcode = '22023';
  end if;
  insert into auth.users (id, aud, role, raw_app_meta_data, raw_user_meta_data, email_confirmed_at)
  values (key_id, 'authenticated', 'authenticated',
    jsonb_build_object('provider', 'api_key', 'providers', '[]'::jsonb, 'api_key', true,
      'workspace_id', create_api_key.workspace_id),
    jsonb_build_object('display_name', clean), now());
  insert into internal.api_keys (id, workspace_id, lookup, secret_hash, name, role, created_by, expires_at)
  values (key_id, create_api_key.workspace_id, lookup, sha256(convert_to(full_key, 'UTF8')), clean,
    create_api_key.role, uid, create_api_key.expires_at)
  returning * into created;
  perform internal.audit_record('api_key.created', created.workspace_id, null, 'api_key', created.id::text,
    jsonb_build_object('name', created.name, 'role', created.role, 'prefix', 'tnt_' || created.lookup,
      'expires_at', created.expires_at));
  return internal.api_key_facts(created) || jsonb_build_object('key', full_key);
end
$$;

-- The workspace's keys, newest first, for its owners and admins (never a secret or its hash).
create function public.list_api_keys(workspace_id uuid) returns setof jsonb
language plpgsql stable security definer set search_path = ''
as $$
begin
  perform internal.require_user();
  if coalesce(tenantry.role(list_api_keys.workspace_id) < 'admin', true) then
    raise exception 'Workspace not found' using errcode = 'PT404';
  end if;
  return query
    select internal.api_key_facts(k) || jsonb_build_object('created_by_name', p.display_name)
    from internal.api_keys k left join public.profiles p on p.id = k.created_by
    where k.workspace_id = list_api_keys.workspace_id
    order by k.created_at desc;
end
$$;

-- Revokes a key at once: the next request with it is refused (the service reads the key on every
-- request, and its principal stops standing in the database too).
create function public.revoke_api_key(key_id uuid) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  target internal.api_keys;
begin
  select * into target from internal.api_keys k where k.id = revoke_api_key.key_id for update;
  if not found or coalesce(tenantry.role(target.workspace_id) < 'admin', true) then
    raise exception 'API key not found' using errcode = 'PT404';
  end if;
  if target.revoked_at is null then
    update internal.api_keys k set revoked_at = now(), revoked_by = uid where k.id = target.id
    returning * into target;
    update auth.users u set banned_until = 'infinity' where u.id = target.id;
    perform internal.audit_record('api_key.revoked', target.workspace_id, null, 'api_key', target.id::text,
      jsonb_build_object('name', target.name, 'role', target.role, 'prefix', 'tnt_' || target.lookup));
  end if;
  return internal.api_key_facts(target);
end
$$;

alter function internal.api_key_facts(internal.api_keys) owner to service_role;
alter function public.create_api_key(uuid, text, public.workspace_role, timestamptz) owner to service_role;
alter function public.list_api_keys(uuid) owner to service_role;
alter function public.revoke_api_key(uuid) owner to service_role;
revoke all on function internal.api_key_facts(internal.api_keys) from public;
grant execute on function internal.api_key_facts(internal.api_keys) to service_role;
revoke all on function public.create_api_key(uuid, text, public.workspace_role, timestamptz) from public;
revoke all on function public.list_api_keys(uuid) from public;
revoke all on function public.revoke_api_key(uuid) from public;
grant execute on function public.create_api_key(uuid, text, public.workspace_role, timestamptz) to authenticated;
grant execute on function public.list_api_keys(uuid) to authenticated;
grant execute on function public.revoke_api_key(uuid) to authenticated;
