-- Every foreign key gets an index on its referencing columns (npm run db:lint,
-- unindexed_foreign_key). Deleting or re-keying a referenced row checks the referencing table; without
-- an index that check reads the whole table: a hard deletion of one user spent 123-163 ms in the
-- activity_events check alone at 500k events, against 8-12 ms with the index, growing with the table.
create index activity_events_actor_idx on public.activity_events (actor_id);
create index invitations_workspace_idx on public.invitations (workspace_id);
create index invitations_invited_by_idx on public.invitations (invited_by);
create index invitations_accepted_by_idx on public.invitations (accepted_by);
create index projects_created_by_idx on public.projects (created_by);
create index workspaces_created_by_idx on public.workspaces (created_by);
create index refresh_tokens_user_idx on auth.refresh_tokens (user_id);
create index sessions_factor_idx on auth.sessions (factor_id);
create index oauth_states_linking_user_idx on auth.oauth_states (linking_user_id);
