-- A token issued to an OAuth client (decision 0093: it carries client_id, on a session of the
-- client's own) acts for the user on their data, but never makes a workspace API key: a key
-- outlives the client's grant, so an app the user disconnects would keep the access through it.
-- Checked where every key is made, the insert into internal.api_keys, so it holds for
-- create_api_key and for anything added later.
create function internal.refuse_api_keys_for_oauth_clients() returns trigger
language plpgsql set search_path = ''
as $$
begin
  if coalesce(auth.jwt() ->> 'client_id', '') <> '' then
    raise exception 'A token issued to an OAuth client cannot create API keys: sign in as yourself'
      using errcode = '42501';
  end if;
  return new;
end
$$;
revoke all on function internal.refuse_api_keys_for_oauth_clients() from public;

create trigger api_keys_not_for_oauth_clients before insert on internal.api_keys
  for each row execute function internal.refuse_api_keys_for_oauth_clients();
