-- Anonymous users (POST /auth/v1/signup without an address): what makes one permanent, and what
-- it may not do while anonymous. Both live here so they hold for every path that changes a user
-- (e-mail change confirmed, autoconfirmed address, admin update) and every way to create a
-- workspace (the RPC, server actions, direct inserts).

-- An anonymous user whose account gains a confirmed e-mail address is a permanent user from then
-- on, as GoTrue does on confirming the address: is_anonymous clears, the e-mail provider is
-- recorded in app_metadata and the account gets its e-mail identity.
create function internal.on_anonymous_user_confirmed() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  new.is_anonymous := false;
  new.raw_app_meta_data := new.raw_app_meta_data || jsonb_build_object(
    'provider', coalesce(new.raw_app_meta_data ->> 'provider', 'email'),
    'providers', (
      select coalesce(jsonb_agg(distinct p), '[]'::jsonb)
      from jsonb_array_elements_text(
        coalesce(new.raw_app_meta_data -> 'providers', '[]'::jsonb) || '["email"]'::jsonb
      ) as p
    )
  );
  insert into auth.identities (user_id, provider, provider_id, identity_data)
  values (new.id, 'email', new.id::text, jsonb_build_object('sub', new.id::text, 'email', new.email,
    'email_verified', true, 'phone_verified', false))
  on conflict (provider, provider_id) do nothing;
  return new;
end
$$;
create trigger users_anonymous_confirmed before update on auth.users
  for each row when (old.is_anonymous and new.is_anonymous and new.email is not null
    and new.email_confirmed_at is not null)
  execute function internal.on_anonymous_user_confirmed();

-- Anonymous users cannot create workspaces: a workspace brings invitations (e-mails sent in its
-- name), seats and billing, which need someone who can be reached and held to account. Adding an
-- e-mail address (and confirming it) lifts this at once: the account row decides, not the token.
create function internal.refuse_anonymous_workspace() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if internal.acting_as_user()
     and exists (select 1 from auth.users u where u.id = auth.uid() and u.is_anonymous) then
    raise exception 'Add an e-mail address to your account before creating a workspace'
      using errcode = '42501';
  end if;
  return new;
end
$$;
create trigger workspaces_not_anonymous before insert on public.workspaces
  for each row execute function internal.refuse_anonymous_workspace();
