-- Files in the web app (decision 0077): profile pictures, workspace logos and project attachments,
-- each in its own private bucket under policies, and gone with what they belong to.
--
-- * `profile-avatars`: `<user id>/<file>`. A user writes only their own folder; a picture is readable by
--   whoever may read its owner's profile row (themselves and coworkers in open workspaces, the
--   rule of migration 0052), so the picture is exactly as visible as the name beside it.
--   profiles.avatar_path names the current one.
-- * `workspace-logos`: `<workspace id>/<file>`. Every member reads, admins and owners write (the
--   roles that may change the workspace row). workspaces.logo_path names the current one. A
--   workspace bucket: counted against the plan's bytes and deleted with the workspace (0071).
-- * `project-files`: `<workspace id>/<project id>/<folder>/<file name>`. Readers read, members
--   write and delete, as in `workspace-files`; a file may only be added to a project that exists
--   in that workspace. A workspace bucket too. Deleting a project deletes its files (their bytes
--   through the deletion queue, decision 0070).
-- * Setting a picture checks that it was uploaded; replacing or removing one deletes the old
--   file, and so does deleting the account (the soft deletion of migration 0041).
--
-- The buckets' size limits and file types are kept in step with configuration at start-up
-- (src/server/storage/app-buckets.ts); the values here are the defaults.

alter table public.profiles add column avatar_path text
  check (avatar_path is null
         or (char_length(avatar_path) <= 200 and split_part(avatar_path, '/', 1) = id::text
             and avatar_path ~ '^[0-9a-f-]{36}/[A-Za-z0-9._-]{1,100}$'));
alter table public.workspaces add column logo_path text
  check (logo_path is null
         or (char_length(logo_path) <= 200 and split_part(logo_path, '/', 1) = id::text
             and logo_path ~ '^[0-9a-f-]{36}/[A-Za-z0-9._-]{1,100}$'));
grant update (avatar_path) on public.profiles to authenticated;
grant update (logo_path) on public.workspaces to authenticated;

insert into storage.buckets (id, name, public, file_size_limit, allowed_mime_types) values
  ('profile-avatars', 'profile-avatars', false, 2097152, array['image/png', 'image/jpeg', 'image/webp']),
  ('workspace-logos', 'workspace-logos', false, 2097152, array['image/png', 'image/jpeg', 'image/webp']),
  ('project-files', 'project-files', false, 52428800, null);
insert into internal.workspace_buckets (bucket_id) values ('workspace-logos'), ('project-files');

create policy app_buckets_read on storage.buckets for select to authenticated
  using (id in ('profile-avatars', 'workspace-logos', 'project-files'));

-- Avatars: one's own folder to write; a picture is read where its owner's profile is.
create policy avatars_read on storage.objects for select to authenticated
  using (bucket_id = 'profile-avatars'
         and (path_tokens[1] = (select auth.uid())::text
              or path_tokens[1] = any ((select array(select c::text from internal.my_coworker_ids() c))::text[])));
create policy avatars_insert on storage.objects for insert to authenticated
  with check (bucket_id = 'profile-avatars' and path_tokens[1] = (select auth.uid())::text and level = 2);
create policy avatars_update on storage.objects for update to authenticated
  using (bucket_id = 'profile-avatars' and path_tokens[1] = (select auth.uid())::text)
  with check (bucket_id = 'profile-avatars' and path_tokens[1] = (select auth.uid())::text and level = 2);
create policy avatars_delete on storage.objects for delete to authenticated
  using (bucket_id = 'profile-avatars' and path_tokens[1] = (select auth.uid())::text);

-- Workspace logos: members read, admins and owners write.
create policy workspace_logos_read on storage.objects for select to authenticated
  using (bucket_id = 'workspace-logos'
         and path_tokens[1] = any ((select tenantry.workspace_ids())::text[]));
create policy workspace_logos_insert on storage.objects for insert to authenticated
  with check (bucket_id = 'workspace-logos' and level = 2
              and path_tokens[1] = any ((select tenantry.workspace_ids('admin'))::text[]));
create policy workspace_logos_update on storage.objects for update to authenticated
  using (bucket_id = 'workspace-logos'
         and path_tokens[1] = any ((select tenantry.workspace_ids('admin'))::text[]))
  with check (bucket_id = 'workspace-logos' and level = 2
              and path_tokens[1] = any ((select tenantry.workspace_ids('admin'))::text[]));
create policy workspace_logos_delete on storage.objects for delete to authenticated
  using (bucket_id = 'workspace-logos'
         and path_tokens[1] = any ((select tenantry.workspace_ids('admin'))::text[]));

-- Project files: readers read, members write, and only into a project of that workspace.
create function internal.project_in_workspace(workspace text, project text) returns boolean
language sql stable security definer set search_path = ''
as $$
  select exists (
    select 1 from public.projects p
    where project ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
      and p.id = project::uuid and p.workspace_id::text = workspace)
$$;
create policy project_files_read on storage.objects for select to authenticated
  using (bucket_id = 'project-files'
         and path_tokens[1] = any ((select tenantry.workspace_ids())::text[]));
create policy project_files_insert on storage.objects for insert to authenticated
  with check (bucket_id = 'project-files' and level = 4
              and path_tokens[1] = any ((select tenantry.workspace_ids('member'))::text[])
              and internal.project_in_workspace(path_tokens[1], path_tokens[2]));
create policy project_files_update on storage.objects for update to authenticated
  using (bucket_id = 'project-files'
         and path_tokens[1] = any ((select tenantry.workspace_ids('member'))::text[]))
  with check (bucket_id = 'project-files' and level = 4
              and path_tokens[1] = any ((select tenantry.workspace_ids('member'))::text[])
              and internal.project_in_workspace(path_tokens[1], path_tokens[2]));
create policy project_files_delete on storage.objects for delete to authenticated
  using (bucket_id = 'project-files'
         and path_tokens[1] = any ((select tenantry.workspace_ids('member'))::text[]));

-- A deleted project's files go with it.
create function internal.delete_project_files() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  delete from storage.objects o
  where o.bucket_id = 'project-files' and o.name like old.workspace_id::text || '/' || old.id::text || '/%';
  return old;
end
$$;
create trigger projects_delete_files before delete on public.projects
  for each row execute function internal.delete_project_files();

-- A picture named by a profile or workspace must have been uploaded to its folder; the one it
-- replaces (and any upload never used) is deleted.
create function internal.keep_current_picture() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  bucket text := tg_argv[0];
  folder text;
  old_path text;
  new_path text;
begin
  if tg_table_name = 'profiles' then
    folder := coalesce(new.id, old.id)::text;
    old_path := case when tg_op <> 'INSERT' then old.avatar_path end;
    new_path := case when tg_op <> 'DELETE' then new.avatar_path end;
  else
    folder := coalesce(new.id, old.id)::text;
    old_path := case when tg_op <> 'INSERT' then old.logo_path end;
    new_path := case when tg_op <> 'DELETE' then new.logo_path end;
  end if;
  if tg_op = 'UPDATE' and new_path is not distinct from old_path then
    return new;
  end if;
  if new_path is not null and not exists (
    select 1 from storage.objects o where o.bucket_id = bucket and o.name = new_path
  ) then
    raise exception 'The picture was not uploaded; upload it again' using errcode = '22023';
  end if;
  delete from storage.objects o
  where o.bucket_id = bucket and o.name like folder || '/%' and o.name is distinct from new_path;
  return coalesce(new, old);
end
$$;
create trigger profiles_keep_current_avatar before update of avatar_path or delete on public.profiles
  for each row execute function internal.keep_current_picture('profile-avatars');
create trigger workspaces_keep_current_logo before update of logo_path on public.workspaces
  for each row execute function internal.keep_current_picture('workspace-logos');

-- A deleted account's picture goes at once (the profile row stays, decision 0035).
create function internal.forget_deleted_avatar() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  update public.profiles set avatar_path = null where id = new.id and avatar_path is not null;
  delete from storage.objects o where o.bucket_id = 'profile-avatars' and o.name like new.id::text || '/%';
  return null;
end
$$;
create trigger users_forget_avatar after update of deleted_at on auth.users
  for each row when (old.deleted_at is null and new.deleted_at is not null)
  execute function internal.forget_deleted_avatar();

alter function internal.project_in_workspace(text, text) owner to service_role;
alter function internal.delete_project_files() owner to service_role;
alter function internal.keep_current_picture() owner to service_role;
alter function internal.forget_deleted_avatar() owner to service_role;
revoke all on function internal.project_in_workspace(text, text), internal.delete_project_files(),
  internal.keep_current_picture(), internal.forget_deleted_avatar() from public;
grant execute on function internal.project_in_workspace(text, text) to authenticated, service_role;
