-- A workspace keeps at most 20 old addresses (decision 0088). Each rename reserves the address it
-- leaves for as long as the workspace exists (0094), so without a bound one admin renaming in a
-- loop could reserve any number of names nobody else may take. Twenty is far beyond what a team
-- renames in a workspace's life; past it a rename that would add a 21st old address is refused,
-- while taking back one of the workspace's own old addresses (which adds none) stays allowed.
--
-- Same checks as 0094, plus the bound. The count reads a fresh snapshot in the trigger, after the
-- row lock that concurrent renames of one workspace queue on, so two renames cannot both pass at 19.
-- SQLSTATE 23514 (a check, 400 through the data API) with its own constraint name, so the settings
-- form can say what happened.
create or replace function internal.validate_workspace() returns trigger
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
  if tg_op = 'INSERT' or new.slug <> old.slug then
    if exists (select 1 from public.workspaces w where w.slug = new.slug and w.id <> new.id) then
      raise exception 'The slug "%" is taken', new.slug using errcode = '23505';
    end if;
    if exists (select 1 from internal.workspace_slug_history h
               where h.slug = new.slug and h.workspace_id <> new.id) then
      raise exception 'The slug "%" is taken: it is another workspace''s old address, which still leads there',
        new.slug using errcode = '23505';
    end if;
  end if;
  if tg_op = 'UPDATE' and new.slug <> old.slug
     and not exists (select 1 from internal.workspace_slug_history h
                     where h.slug = new.slug and h.workspace_id = new.id)
     and (select count(*) from internal.workspace_slug_history h where h.workspace_id = new.id) >= 20 then
    raise exception 'This workspace has had 20 other addresses, which all still lead to it; it may go back to one of them, but not take a new one'
      using errcode = '23514', constraint = 'workspace_old_addresses_limit';
  end if;
  return new;
end
$$;
