-- A confirmed address is recorded where GoTrue records it, so applications that read
-- user.user_metadata.email_verified (or the e-mail identity's identity_data) see it:
-- GoTrue's User.Confirm merges {"email_verified": true} into the user's metadata, and a verified
-- sign-up sets it on the e-mail identity whose address is the user's. One trigger does it for
-- every way an address becomes confirmed (sign-up with autoconfirm, links and codes, invitations,
-- the service role's email_confirm, providers, an anonymous user's new address).

-- No definer rights: only the identity service, which owns auth.users and auth.identities,
-- changes a user row (as for the anonymous conversion, 0033).
create function internal.on_email_confirmed() returns trigger
language plpgsql set search_path = ''
as $$
begin
  if tg_op = 'INSERT' or old.email_confirmed_at is null then
    new.raw_user_meta_data := new.raw_user_meta_data || '{"email_verified": true}'::jsonb;
    if tg_op = 'UPDATE' then
      update auth.identities i set identity_data = i.identity_data || '{"email_verified": true}'::jsonb
      where i.user_id = new.id and i.provider = 'email' and i.email = new.email;
    end if;
  end if;
  return new;
end
$$;
create trigger users_email_confirmed before insert or update of email_confirmed_at on auth.users
  for each row when (new.email_confirmed_at is not null)
  execute function internal.on_email_confirmed();

revoke execute on function internal.on_email_confirmed() from public;

-- Accounts confirmed before this migration, as GoTrue would have left them.
update auth.users set raw_user_meta_data = raw_user_meta_data || '{"email_verified": true}'::jsonb
where email_confirmed_at is not null and not raw_user_meta_data ? 'email_verified';
