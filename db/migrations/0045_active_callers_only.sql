-- Only a live account with a live session acts (docs/decisions/0045).
--
-- An access token outlives what it was issued for: it stays valid until it expires (an hour by
-- default) after its session is signed out, its user banned or soft-deleted. Until now the
-- database took the token's word for all of that, so a banned or deleted account kept writing,
-- and a soft-deleted one even created workspaces again after its deletion had released them.
--
-- The caller's standing is now checked in the database, in one place:
-- * internal.caller_standing() says whether the request's user may act: the account exists, is
--   not soft-deleted, not banned, and the token's session (claim session_id) still exists and
--   has not passed its not_after. Requests without a user (anon, the service role, server work
--   without claims) stand. Two primary-key lookups.
--   Anonymous requests (role anon) never name a user, so the service does not ask for them and
--   anon keeps no usage of this schema.
-- * internal.require_active_caller() raises the data API's 401 (PGRST303) for a caller that
--   does not stand. The service runs it at the start of every transaction it opens for a caller
--   (src/server/db/transactions.ts), so every read and write through the data API, the web app's
--   pages and server actions refuses at once, whatever policy or function the statement uses.
-- * internal.require_user(), which every operation calls first, checks the same standing, so an
--   operation refuses even when something calls it with claims set some other way.

create function internal.caller_standing() returns text
language plpgsql stable security definer set search_path = ''
as $$
declare
  claims jsonb := coalesce(nullif(current_setting('request.jwt.claims', true), ''), '{}')::jsonb;
  uid uuid := nullif(claims->>'sub', '')::uuid;
  sid uuid := nullif(claims->>'session_id', '')::uuid;
  account record;
begin
  if uid is null then
    return 'active';
  end if;
  select u.deleted_at, u.banned_until into account from auth.users u where u.id = uid;
  if not found or account.deleted_at is not null then
    return 'deleted';
  end if;
  if account.banned_until is not null and account.banned_until > now() then
    return 'banned';
  end if;
  -- Tokens the identity service issues always name their session; a token without one (minted
  -- by the operator's own tooling with the signing secret) has no session to end.
  if sid is not null and not exists (
    select 1 from auth.sessions s
    where s.id = sid and s.user_id = uid and (s.not_after is null or s.not_after > now())
  ) then
    return 'signed_out';
  end if;
  return 'active';
end
$$;

create function internal.require_active_caller() returns void
language plpgsql stable set search_path = ''
as $$
declare
  standing text := internal.caller_standing();
  message text;
begin
  if standing = 'active' then
    return;
  end if;
  message := case standing
    when 'banned' then 'This account is suspended'
    when 'deleted' then 'This account no longer exists'
    else 'This session has ended: sign in again'
  end;
  raise sqlstate 'PGRST' using
    message = json_build_object('code', 'PGRST303', 'message', message,
                                'details', standing, 'hint', null)::text,
    detail = json_build_object('status', 401, 'headers', json_build_object(
      'WWW-Authenticate', 'Bearer error="invalid_token", error_description="' || message || '"'))::text;
end
$$;

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
  return uid;
end
$$;

revoke all on function internal.caller_standing(), internal.require_active_caller() from public;
grant execute on function internal.caller_standing(), internal.require_active_caller()
  to authenticated, service_role;
-- Definers run as the service role, never as a superuser (tests/tenancy/invariants.test.ts).
alter function internal.caller_standing() owner to service_role;
-- What the check reads of a session, and nothing more (it already reads auth.users, 0020).
grant select (id, user_id, not_after) on auth.sessions to service_role;
