-- A workspace that requires two-step verification hides its members' profiles from a session
-- that has not passed it, as it already hid the workspace's rows (migration 0031).
--
-- Profiles are shown to coworkers: everyone who shares a workspace with the caller. That set was
-- built from every membership, so a member at aal1 of a workspace that requires MFA still read
-- the names and avatars of its members. It is now built from the caller's open workspaces
-- (internal.my_open_workspace_id_array), the same set project rows are scoped by; someone who
-- also shares an open workspace with the caller stays visible through that one.

create or replace function internal.my_coworker_ids() returns setof uuid
language sql stable security definer set search_path = ''
as $$
  select distinct m.user_id from public.workspace_members m
  where m.workspace_id = any ((select internal.my_open_workspace_id_array())::uuid[])
$$;
