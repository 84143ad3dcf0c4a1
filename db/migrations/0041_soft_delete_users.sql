-- Soft deletion of an account, as GoTrue's DELETE /admin/users/{id} does it with
-- should_soft_delete: the auth.users row stays (so rows that reference the user keep their
-- reference), marked with deleted_at, and everything that identifies or admits the person goes:
-- the address and phone become a one-way hash (freeing them for a new account), the password,
-- metadata, identities' data, sessions, factors and pending e-mail actions are cleared.
-- On top of GoTrue, the tenancy rules of a hard deletion apply (docs/decisions/0035): the account
-- leaves every workspace, a workspace it owns alone with nobody else goes with it, and the last
-- owner of a workspace that has other members is refused until ownership moves.

alter table auth.users add column deleted_at timestamptz;

-- What leaving the product means for a user's workspaces, for a hard and a soft deletion alike.
create function internal.release_workspaces(p_user uuid) returns void
language plpgsql security definer set search_path = ''
as $$
declare
  sole_owned uuid[];
  blocked text;
begin
  -- Lock the workspaces this user owns alone, so no promotion or join slips in between.
  select coalesce(array_agg(s.id), '{}') into sole_owned
  from (select w.id from public.workspaces w
        where exists (select 1 from public.workspace_members m
                      where m.workspace_id = w.id and m.user_id = p_user and m.role = 'owner')
          and not exists (select 1 from public.workspace_members o
                          where o.workspace_id = w.id and o.role = 'owner' and o.user_id <> p_user)
        for update of w) s;

  select w.name into blocked from public.workspaces w
  where w.id = any (sole_owned)
    and exists (select 1 from public.workspace_members o where o.workspace_id = w.id and o.user_id <> p_user)
  order by w.name
  limit 1;
  if blocked is not null then
    raise exception 'This account is the last owner of the workspace "%": make someone else owner or delete the workspace first', blocked
      using errcode = 'P0001';
  end if;

  delete from public.workspaces w where w.id = any (sole_owned);
  -- Every workspace left has another owner, so the membership guard lets these go.
  delete from public.workspace_members m where m.user_id = p_user;
end
$$;

create or replace function internal.on_user_deleting() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  perform internal.release_workspaces(old.id);
  return old;
end
$$;

-- GoTrue's obfuscation, in lower-case hex (the address columns are lower-case by constraint):
-- one-way, and distinct per user so the unique indexes hold.
create function internal.obfuscated(p_user uuid, p_value text) returns text
language sql immutable set search_path = ''
as $$
  select encode(sha256(convert_to(p_user::text || p_value, 'UTF8')), 'hex')
$$;

-- 'deleted', 'already_deleted' (nothing changes a second time) or 'not_found'.
create function auth.soft_delete_user(p_user uuid) returns text
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

alter function internal.release_workspaces(uuid) owner to service_role;
alter function internal.obfuscated(uuid, text) owner to service_role;
revoke execute on function internal.release_workspaces(uuid), internal.obfuscated(uuid, text),
  auth.soft_delete_user(uuid) from public;
grant execute on function internal.release_workspaces(uuid), internal.obfuscated(uuid, text),
  auth.soft_delete_user(uuid) to service_role;
