-- A user's metadata is bounded where it is stored, so every path that writes it meets the bound.
--
-- user_metadata and app_metadata are copied into every access token the user is issued, and every
-- token is carried in every request's Authorization header (and in the web app's session cookie).
-- They were unbounded: one account stored ~14 kB and every one of its tokens carried it, which is
-- near Node's 16 KiB header limit and let one user fill the verified-token cache. Sign-up data,
-- PUT /user, the admin API, invitations, e-mail sign-in and provider sign-in all write these
-- columns, some by merging into what is there; a check beside the row holds for all of them,
-- and for anything added later.
--
-- The bound is METADATA_MAX_BYTES (written here at start), counted on the stored JSON text. A row
-- already over it (stored before this bound) keeps working: only a write that changes an
-- oversized value is refused, so a password change or a sign-in never fails because of old data.

alter table internal.app_settings
  add column max_metadata_bytes integer not null default 4096 check (max_metadata_bytes between 256 and 1048576);

-- Raises TN413 (the identity service answers 400 validation_failed naming the field and the
-- bound) when a value is over the bound. Also called before a flow that may end up writing
-- nothing (a sign-up or e-mail sign-in for an address already registered), so its answer cannot
-- tell a registered address from a new one.
create function internal.check_metadata_bound(value jsonb, field text) returns void
language plpgsql stable security definer set search_path = ''
as $$
declare
  cap integer;
begin
  select s.max_metadata_bytes into cap from internal.app_settings s;
  if cap is not null and octet_length(value::text) > cap then
    raise exception '% is larger than % bytes', field, cap
      using errcode = 'TN413', detail = json_build_object('field', field, 'max', cap)::text;
  end if;
end
$$;

create function internal.limit_user_metadata() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op = 'INSERT' or new.raw_user_meta_data is distinct from old.raw_user_meta_data then
    perform internal.check_metadata_bound(new.raw_user_meta_data, 'user_metadata');
  end if;
  if tg_op = 'INSERT' or new.raw_app_meta_data is distinct from old.raw_app_meta_data then
    perform internal.check_metadata_bound(new.raw_app_meta_data, 'app_metadata');
  end if;
  return new;
end
$$;

create trigger users_metadata_within_bound before insert or update of raw_user_meta_data, raw_app_meta_data
  on auth.users for each row execute function internal.limit_user_metadata();
-- Definer functions run as service_role (reads app_settings, nothing more), never as the superuser
-- that applies migrations.
alter function internal.check_metadata_bound(jsonb, text) owner to service_role;
alter function internal.limit_user_metadata() owner to service_role;
revoke execute on function internal.limit_user_metadata() from public;
