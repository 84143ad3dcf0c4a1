-- A workspace's old addresses stay its own for as long as they redirect (0029 keeps them, for as
-- long as the workspace exists): nobody else may take one, whichever path writes the slug (the
-- settings form, PATCH /rest/v1/workspaces, create_workspace). Until now a second workspace could
-- take an old address, and the first workspace's members' bookmarks and links then led to a
-- stranger's workspace, or to nothing. The workspace that had the address may take it back.
-- See docs/decisions/0088-old-workspace-addresses.md.

-- Same checks as 0021, plus: the new slug must not be another workspace's old address. No lock is
-- needed against the rename that makes a slug old: that rename moves the slug from the workspace
-- row to the history row in one commit, so the check (a fresh snapshot per statement) sees it in
-- one place or the other, never in neither. SQLSTATE 23505 like the unique index, so
-- create_workspace's retry with a suffix and every caller's "taken" handling apply unchanged.
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
  return new;
end
$$;
