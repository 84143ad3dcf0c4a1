-- File storage (the /storage/v1 API, src/server/storage/): the `storage` schema as Supabase has it,
-- so policies written for Supabase Storage run here unchanged, and the workspace files layout on
-- the tenancy API (decision 0070).
--
-- * storage.buckets and storage.objects with Supabase's columns (owner_id is the token's sub as
--   text, path_tokens the name split on '/', metadata the system metadata, user_metadata the
--   caller's), and the helpers storage.foldername/filename/extension.
-- * RLS enabled and forced on both tables, with no policy: nobody but service_role reads or writes
--   until a policy says so, as on Supabase. The API runs every operation as the caller, so exactly
--   these policies decide.
-- * Bytes live in a backend (local disk or S3) under a key made from the object's version (a new
--   uuid per write), never from its name: a move is a row update, and an overwrite writes a new
--   key and gives up the old one only once the row points at the new one.
-- * Deleting an object row, by the API or by SQL (a workspace's deletion, a team's own cleanup),
--   queues its key in internal.storage_deletions in the same transaction; the server deletes the
--   bytes after commit. A rolled-back deletion queues nothing.
-- * The workspace files bucket `workspace-files` (private): the first folder is the workspace id;
--   viewers read, members write and delete. Its bytes count against the workspace plan's storage
--   limit (internal.plan_storage_limits), checked in the same transaction as the row.

create schema storage;
revoke all on schema storage from public;
grant usage on schema storage to anon, authenticated, service_role;
grant create on schema storage to service_role;

create table storage.buckets (
  id text primary key,
  name text not null,
  owner uuid,
  owner_id text,
  public boolean not null default false,
  file_size_limit bigint check (file_size_limit is null or file_size_limit >= 0),
  allowed_mime_types text[],
  avif_autodetection boolean default false,
  type text not null default 'STANDARD' check (type in ('STANDARD', 'ANALYTICS')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index buckets_name_key on storage.buckets (name);

create table storage.objects (
  id uuid primary key default gen_random_uuid(),
  -- restrict: a bucket with objects cannot be deleted (the API answers 409 ResourceNotEmpty)
  bucket_id text not null references storage.buckets (id),
  name text not null,
  owner uuid,
  owner_id text,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  last_accessed_at timestamptz not null default now(),
  metadata jsonb,
  path_tokens text[] generated always as (string_to_array(name, '/')) stored,
  version text,
  user_metadata jsonb,
  level integer generated always as (array_length(string_to_array(name, '/'), 1)) stored
);
create unique index objects_bucket_id_name_key on storage.objects (bucket_id, name collate "C");
-- Listing reads one bucket's names by prefix in name order.
create index objects_bucket_name_prefix on storage.objects (bucket_id, name text_pattern_ops);

alter table storage.buckets enable row level security;
alter table storage.buckets force row level security;
alter table storage.objects enable row level security;
alter table storage.objects force row level security;

-- Supabase's grants: every API role may try, row-level security decides.
grant select, insert, update, delete on storage.buckets, storage.objects to anon, authenticated, service_role;

-- The folders of a name, without the file: storage.foldername('a/b/c.png') = {a,b}.
create function storage.foldername(name text) returns text[]
language sql immutable set search_path = ''
as $$
  select (string_to_array(name, '/'))[1:greatest(coalesce(array_length(string_to_array(name, '/'), 1), 0) - 1, 0)]
$$;

-- The last segment of a name: storage.filename('a/b/c.png') = 'c.png'.
create function storage.filename(name text) returns text
language sql immutable set search_path = ''
as $$
  select (string_to_array(name, '/'))[array_length(string_to_array(name, '/'), 1)]
$$;

-- The file's extension, after the last dot: storage.extension('a/b/c.tar.gz') = 'gz'.
create function storage.extension(name text) returns text
language sql immutable set search_path = ''
as $$
  select case when storage.filename(name) like '%.%'
    then reverse(split_part(reverse(storage.filename(name)), '.', 1)) else '' end
$$;

grant execute on function storage.foldername(text), storage.filename(text), storage.extension(text)
  to anon, authenticated, service_role;

-- The backend key of an object version (src/server/storage/keys.ts makes the same).
create function storage.object_key(version text) returns text
language sql immutable set search_path = ''
as $$
  select 'objects/' || substr(version, 1, 2) || '/' || version
$$;
grant execute on function storage.object_key(text) to service_role;

-- Keys whose bytes are no longer referenced, deleted from the backend after commit.
create table internal.storage_deletions (
  id bigserial primary key,
  key text not null,
  queued_at timestamptz not null default now()
);
grant select, insert, update, delete on internal.storage_deletions to service_role;
grant usage on sequence internal.storage_deletions_id_seq to service_role;

create function internal.queue_object_bytes() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op = 'DELETE' then
    if old.version is not null then
      insert into internal.storage_deletions (key) values (storage.object_key(old.version));
    end if;
    return old;
  end if;
  -- An overwrite: the old version's bytes go once the row names the new ones.
  if old.version is not null and old.version is distinct from new.version then
    insert into internal.storage_deletions (key) values (storage.object_key(old.version));
  end if;
  return new;
end
$$;
create trigger objects_queue_bytes after update or delete on storage.objects
  for each row execute function internal.queue_object_bytes();

-- ---------------------------------------------------------------------------------------------
-- Workspace buckets: buckets whose first folder is a workspace id, counted against its plan.
create table internal.workspace_buckets (
  bucket_id text primary key references storage.buckets (id) on delete cascade
);
grant select, insert, update, delete on internal.workspace_buckets to service_role;

-- Storage bytes per plan; null = unlimited. Kept in step with FREE_PLAN_STORAGE_BYTES and
-- BILLING_PLANS' storageBytes at start-up (src/server/storage/plan-bytes.ts).
create table internal.plan_storage_limits (
  plan text primary key,
  max_bytes bigint check (max_bytes is null or max_bytes >= 0)
);
insert into internal.plan_storage_limits (plan, max_bytes) values ('free', 1073741824);
grant select, insert, update, delete on internal.plan_storage_limits to service_role;

-- Bytes each workspace holds in workspace buckets, kept by the trigger below.
create table internal.workspace_storage_usage (
  workspace_id uuid primary key references public.workspaces (id) on delete cascade,
  bytes bigint not null default 0
);
grant select, insert, update, delete on internal.workspace_storage_usage to service_role;

-- The workspace an object of a workspace bucket belongs to (null for other objects, or a first
-- folder that is not a workspace id: compared as text so a bad name is a denial, not an error).
create function internal.object_workspace(bucket text, tokens text[]) returns uuid
language sql stable security definer set search_path = ''
as $$
  select w.id from public.workspaces w
  where exists (select 1 from internal.workspace_buckets b where b.bucket_id = bucket)
    and tokens[1] ~ '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$'
    and w.id = tokens[1]::uuid
$$;

-- The storage limit of the workspace's current plan; null = unlimited.
create function tenantry.storage_bytes_limit(workspace_id uuid) returns bigint
language sql stable security definer set search_path = ''
as $$
  select l.max_bytes from internal.plan_storage_limits l
  where l.plan = (select e.plan from internal.workspace_entitlements(storage_bytes_limit.workspace_id) e)
$$;

-- Bytes the workspace holds in workspace buckets.
create function tenantry.storage_bytes_used(workspace_id uuid) returns bigint
language sql stable security definer set search_path = ''
as $$
  select coalesce((select u.bytes from internal.workspace_storage_usage u
                   where u.workspace_id = storage_bytes_used.workspace_id), 0)
$$;

create function internal.count_workspace_bytes() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  old_ws uuid;
  new_ws uuid;
  old_size bigint := 0;
  new_size bigint := 0;
  total bigint;
  allowed bigint;
begin
  if tg_op in ('UPDATE', 'DELETE') then
    old_ws := internal.object_workspace(old.bucket_id, old.path_tokens);
    old_size := coalesce((old.metadata->>'size')::bigint, 0);
  end if;
  if tg_op in ('INSERT', 'UPDATE') then
    new_ws := internal.object_workspace(new.bucket_id, new.path_tokens);
    new_size := coalesce((new.metadata->>'size')::bigint, 0);
  end if;
  if old_ws is not null then
    update internal.workspace_storage_usage set bytes = greatest(bytes - old_size, 0) where workspace_id = old_ws;
  end if;
  if new_ws is not null then
    -- The row lock taken here orders concurrent uploads to one workspace, so two cannot both
    -- pass the check with the same remaining bytes.
    insert into internal.workspace_storage_usage as u (workspace_id, bytes) values (new_ws, new_size)
    on conflict (workspace_id) do update set bytes = u.bytes + excluded.bytes
    returning u.bytes into total;
    if new_size > 0 and (old_ws is distinct from new_ws or new_size > old_size) then
      allowed := tenantry.storage_bytes_limit(new_ws);
      if allowed is not null and total > allowed then
        raise exception 'This workspace has reached its plan''s storage limit of % bytes', allowed
          using errcode = 'PT413', hint = 'Upgrade the plan or delete some files first';
      end if;
    end if;
  end if;
  return null;
end
$$;
create trigger objects_count_workspace_bytes after insert or update or delete on storage.objects
  for each row execute function internal.count_workspace_bytes();

-- A deleted workspace's files go with it (their bytes through the deletion queue).
create function internal.delete_workspace_files() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  delete from storage.objects o
  where o.bucket_id in (select b.bucket_id from internal.workspace_buckets b)
    and o.path_tokens[1] = old.id::text;
  return old;
end
$$;
create trigger workspaces_delete_files before delete on public.workspaces
  for each row execute function internal.delete_workspace_files();

alter function internal.queue_object_bytes() owner to service_role;
alter function internal.object_workspace(text, text[]) owner to service_role;
alter function internal.count_workspace_bytes() owner to service_role;
alter function internal.delete_workspace_files() owner to service_role;
alter function tenantry.storage_bytes_limit(uuid) owner to service_role;
alter function tenantry.storage_bytes_used(uuid) owner to service_role;
revoke all on function internal.queue_object_bytes(), internal.object_workspace(text, text[]),
  internal.count_workspace_bytes(), internal.delete_workspace_files(),
  tenantry.storage_bytes_limit(uuid), tenantry.storage_bytes_used(uuid) from public;
grant execute on function tenantry.storage_bytes_limit(uuid), tenantry.storage_bytes_used(uuid)
  to authenticated, service_role;
grant execute on function internal.object_workspace(text, text[]) to service_role;

-- The workspace files bucket and its policies, on the tenancy API (MFA lock and standing included).
insert into storage.buckets (id, name, public) values ('workspace-files', 'workspace-files', false);
insert into internal.workspace_buckets (bucket_id) values ('workspace-files');

create policy workspace_files_bucket_read on storage.buckets for select to authenticated
  using (id = 'workspace-files');
create policy workspace_files_read on storage.objects for select to authenticated
  using (bucket_id = 'workspace-files'
         and path_tokens[1] = any ((select tenantry.workspace_ids())::text[]));
create policy workspace_files_insert on storage.objects for insert to authenticated
  with check (bucket_id = 'workspace-files'
              and path_tokens[1] = any ((select tenantry.workspace_ids('member'))::text[]));
create policy workspace_files_update on storage.objects for update to authenticated
  using (bucket_id = 'workspace-files'
         and path_tokens[1] = any ((select tenantry.workspace_ids('member'))::text[]))
  with check (bucket_id = 'workspace-files'
              and path_tokens[1] = any ((select tenantry.workspace_ids('member'))::text[]));
create policy workspace_files_delete on storage.objects for delete to authenticated
  using (bucket_id = 'workspace-files'
         and path_tokens[1] = any ((select tenantry.workspace_ids('member'))::text[]));
