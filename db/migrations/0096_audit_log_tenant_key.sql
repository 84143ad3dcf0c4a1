-- The audit log's tenant key is planned as the other workspace tables' are (decision 0038,
-- migration 0044): owners and admins read it through `workspace_id = any (<their workspaces>)`,
-- and a fixed n_distinct lets that array drive the (workspace_id, created_at) index however many
-- lines one large workspace holds, so a page of the log costs what the reader can see.
alter table public.audit_events alter column workspace_id set (n_distinct = 1000);
analyze public.audit_events;
