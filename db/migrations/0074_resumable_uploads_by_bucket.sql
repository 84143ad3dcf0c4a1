-- Resumable uploads found by their bucket: deleting a bucket deletes its uploads in progress
-- (on delete cascade, migration 0073), which without this index scans every upload.
create index storage_resumable_uploads_bucket on internal.storage_resumable_uploads (bucket_id);
