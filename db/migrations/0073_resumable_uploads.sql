-- Resumable (TUS) uploads in progress. An upload is a row here and the parts its chunks were
-- stored as; it becomes a row of storage.objects only when its last byte has arrived, so nothing
-- of it is visible before. Its id is the version the object will have. Deleting the row (the
-- upload completed, was terminated, expired, or its bucket went) queues its parts' bytes for
-- deletion in the same transaction, as deleting an object queues its bytes (migration 0070).
create table internal.storage_resumable_uploads (
  id uuid primary key,
  bucket_id text not null references storage.buckets (id) on delete cascade,
  name text not null,
  upload_length bigint not null check (upload_length >= 0),
  upload_offset bigint not null default 0,
  -- the backend keys of the parts stored so far, in order; their sizes add up to upload_offset.
  -- Once the last part arrived it holds that part and the object's own key too, so an upload
  -- whose completion failed or was cut short by a crash leaves nothing behind when it goes.
  parts text[] not null default '{}',
  -- the last part arrived and the object is being written: further chunks are refused
  completing boolean not null default false,
  upsert boolean not null,
  -- who may continue it: the creator's role and user id, or the signed upload URL's path
  creator_role text not null,
  creator_sub text,
  signed boolean not null,
  owner_id text,
  content_type text not null,
  cache_control text not null,
  user_metadata jsonb,
  -- the Upload-Metadata header as created, answered again by HEAD
  metadata_header text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  check (upload_offset between 0 and upload_length)
);
create index storage_resumable_uploads_expiry on internal.storage_resumable_uploads (expires_at);
grant select, insert, update, delete on internal.storage_resumable_uploads to service_role;

create function internal.queue_resumable_parts() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  insert into internal.storage_deletions (key) select unnest(old.parts);
  return old;
end
$$;
create trigger resumable_uploads_queue_parts after delete on internal.storage_resumable_uploads
  for each row execute function internal.queue_resumable_parts();
