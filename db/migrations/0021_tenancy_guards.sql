-- Guards added to the tenancy model of 0020_tenancy.sql, found by testing it as a hostile client
-- would use it:
--   * direct workspace edits through the data API get the same clear errors as create_workspace
--     (instead of constraint names);
--   * create_workspace no longer fails when two people create same-named workspaces at once;
--   * invitations are bound to a confirmed account e-mail;
--   * deleting an account can no longer leave a workspace without an owner.
-- See docs/data-model.md and docs/decisions/0002-tenancy-model.md.

-- ---------------------------------------------------------------------------------------------
-- Workspace name and slug: one place that validates them, whoever writes (an admin's PATCH on
-- /rest/v1/workspaces or create_workspace). SECURITY DEFINER so the "slug taken" check sees
-- workspaces the caller cannot read; the unique index would reveal the same fact, less clearly.
-- ---------------------------------------------------------------------------------------------
create function internal.validate_workspace() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  new.name := btrim(coalesce(new.name, ''));
  if char_length(new.name) not between 1 and 100 then
    raise exception 'Workspace name must be 1 to 100 characters' using errcode = '22023';
  end if;
  if new.slug is null or new.slug !~ '^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$' then
    raise exception 'Slug must be 1 to 48 lowercase letters, digits or dashes, not starting or ending with a dash'
      using errcode = '22023';
  end if;
  if (tg_op = 'INSERT' or new.slug <> old.slug)
     and exists (select 1 from public.workspaces w where w.slug = new.slug and w.id <> new.id) then
    raise exception 'The slug "%" is taken', new.slug using errcode = '23505';
  end if;
  return new;
end
$$;
create trigger workspaces_validate before insert or update of name, slug on public.workspaces
  for each row execute function internal.validate_workspace();

-- Same contract as 0020 (the creator becomes owner, a derived slug is made unique), but the insert
-- itself is retried: checking first and inserting later lost the race when two users created
-- "Acme" at the same moment, and all but one got a raw unique-violation.
create or replace function public.create_workspace(name text, slug text default null)
returns public.workspaces
language plpgsql security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  clean_name text := btrim(coalesce(name, ''));
  base text;
  candidate text;
  created public.workspaces;
  attempt integer := 0;
begin
  if char_length(clean_name) not between 1 and 100 then
    raise exception 'Workspace name must be 1 to 100 characters' using errcode = '22023';
  end if;
  if slug is null then
    base := btrim(left(regexp_replace(lower(clean_name), '[^a-z0-9]+', '-', 'g'), 40), '-');
    if base = '' then
      base := 'workspace';
    end if;
    candidate := base;
  else
    candidate := slug; -- its format is checked by the workspaces_validate trigger
  end if;

  loop
    begin
      insert into public.workspaces (name, slug, created_by) values (clean_name, candidate, uid)
        returning * into created;
      exit;
    exception when unique_violation then
      -- An explicit slug is the caller's choice: report it. A derived one gets a random suffix.
      attempt := attempt + 1;
      if slug is not null or attempt > 20 then
        raise exception 'The slug "%" is taken', candidate using errcode = '23505';
      end if;
      candidate := base || '-' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 6);
    end;
  end loop;

  insert into public.workspace_members (workspace_id, user_id, role) values (created.id, uid, 'owner');
  insert into public.subscriptions (workspace_id) values (created.id);
  return created;
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Invitations are addressed to an e-mail; only an account that proved it owns that address may
-- see or accept them. Sign-in already requires confirmation, but tokens can come from other
-- grants (anonymous users, administrator-created users), so the database checks it itself.
-- ---------------------------------------------------------------------------------------------
create or replace function internal.my_email() returns text
language sql stable security definer set search_path = ''
as $$
  select u.email from auth.users u where u.id = auth.uid() and u.email_confirmed_at is not null
$$;

create or replace function internal.open_invitation_for_caller(token text) returns public.invitations
language plpgsql security definer set search_path = ''
as $$
declare
  invitation public.invitations;
begin
  select i.* into invitation from internal.invitation_tokens t join public.invitations i on i.id = t.invitation_id
  where t.token_hash = internal.token_hash(coalesce(token, ''))
  for update of i;
  if invitation.id is null then
    raise exception 'Invitation not found' using errcode = 'PT404';
  end if;
  if invitation.email <> coalesce(internal.my_email(), '') then
    if exists (select 1 from auth.users u where u.id = auth.uid() and u.email = invitation.email) then
      raise exception 'Confirm your e-mail address before answering this invitation' using errcode = '42501';
    end if;
    raise exception 'This invitation was sent to a different e-mail address' using errcode = '42501';
  end if;
  if invitation.accepted_at is not null then
    raise exception 'This invitation has already been used' using errcode = 'PT409';
  end if;
  if invitation.revoked_at is not null then
    raise exception 'This invitation was revoked' using errcode = 'PT410';
  end if;
  if invitation.declined_at is not null then
    raise exception 'This invitation was declined' using errcode = 'PT410';
  end if;
  if invitation.expires_at <= now() then
    raise exception 'This invitation has expired; ask for a new one' using errcode = 'PT410';
  end if;
  return invitation;
end
$$;

-- ---------------------------------------------------------------------------------------------
-- Deleting an account. The members trigger lets cascades through (there is nobody left to
-- protect once the user is gone), so without this an account deletion left its workspaces with
-- members and no owner. Now: the last owner of a workspace that has other members cannot be
-- deleted (ownership must move first, exactly as for leaving); a workspace with no other member
-- goes with the account.
-- ---------------------------------------------------------------------------------------------
create function internal.on_user_deleting() returns trigger
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
                      where m.workspace_id = w.id and m.user_id = old.id and m.role = 'owner')
          and not exists (select 1 from public.workspace_members o
                          where o.workspace_id = w.id and o.role = 'owner' and o.user_id <> old.id)
        for update of w) s;

  select w.name into blocked from public.workspaces w
  where w.id = any (sole_owned)
    and exists (select 1 from public.workspace_members o where o.workspace_id = w.id and o.user_id <> old.id)
  order by w.name
  limit 1;
  if blocked is not null then
    raise exception 'This account is the last owner of the workspace "%": make someone else owner or delete the workspace first', blocked
      using errcode = 'P0001';
  end if;

  delete from public.workspaces w where w.id = any (sole_owned);
  return old;
end
$$;
create trigger users_keep_workspaces_owned before delete on auth.users
  for each row execute function internal.on_user_deleting();

-- Definer functions run as service_role (BYPASSRLS, only its grants), as in 0020.
alter function internal.validate_workspace() owner to service_role;
alter function internal.on_user_deleting() owner to service_role;
revoke execute on function internal.validate_workspace(), internal.on_user_deleting() from public;
grant execute on function internal.validate_workspace(), internal.on_user_deleting() to service_role;
