-- Live workspace pages (decision 0082): what the web app's pages listen to, and who may listen.
--
-- * The core tables the overview and the members page show are published to realtime:
--   projects and activity_events scoped to their workspace (their SELECT policies admit only the
--   workspace's members, so a change is offered to those members only); workspace_members and
--   invitations unscoped, because people outside the workspace may read some of their rows (the
--   invitee their invitation, a removed member their own membership's deletion, below).
-- * REPLICA IDENTITY FULL on the three tables whose rows are deleted: a deleted row's old image
--   then carries its workspace_id, so a subscription filtered by `workspace_id=eq.<id>` receives
--   deletes too (realtime filters a delete on its replica identity, as Supabase does).
-- * members_read_own: a user reads their own membership rows. While such a row exists its user is
--   a member, so tenantry.workspace_ids() already admits it and the data API sees nothing new; the
--   difference is for realtime, which judges a deletion on the row as it was: the member who is
--   removed (or leaves) is told of it, and their pages leave the workspace at once. The caller's
--   standing is required as everywhere else; members_mfa still hides an MFA-locked workspace.
-- * realtime.messages policies: the members of a workspace (any role, under the tenancy API's
--   rules: standing, MFA lock) may read and write the private channel `workspace:<id>`, for
--   presence ("who else is here") and broadcasts among themselves. Nobody else may.

select realtime.enable_changes('public.projects', scope => 'workspace_id');
select realtime.enable_changes('public.activity_events', scope => 'workspace_id');
select realtime.enable_changes('public.workspace_members');
select realtime.enable_changes('public.invitations');

alter table public.projects replica identity full;
alter table public.workspace_members replica identity full;
alter table public.invitations replica identity full;

create policy members_read_own on public.workspace_members for select to authenticated
  using (user_id = (select auth.uid()) and (select internal.caller_standing()) = 'active');

create policy workspace_channels_read on realtime.messages for select to authenticated
  using ((select realtime.topic()) = any (
    select 'workspace:' || w::text from unnest((select tenantry.workspace_ids())) as w));
create policy workspace_channels_write on realtime.messages for insert to authenticated
  with check ((select realtime.topic()) = any (
    select 'workspace:' || w::text from unnest((select tenantry.workspace_ids())) as w));
