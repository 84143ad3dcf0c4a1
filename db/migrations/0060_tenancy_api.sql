-- The tenancy API: one documented way, in its own schema, for core and application policies alike
-- to ask which workspaces the caller may reach (docs/build-on-tenantry.md, decision 0060).
--
-- Until now core policies called internal.my_workspace_id_array(), which ignores a workspace's
-- "require two-step verification" setting (restrictive policies made up for it on core tables
-- only), and internal.my_open_workspace_id_array(), which honours it. An application table
-- written after the first silently skipped the MFA lock. Every function here honours, for the
-- caller of the current statement:
-- * memberships as they are now (read from public.workspace_members, never from the token),
-- * the MFA lock: a workspace that requires a second factor is not reachable from a session at
--   aal1,
-- * the account and its session standing (internal.caller_standing, migration 0045): a banned,
--   deleted or signed-out caller reaches nothing.
--
-- In policies, compare with the array wrapped in a sub-select, which PostgreSQL evaluates once per
-- statement and turns into an index condition on (workspace_id, ...) indexes:
--   using (workspace_id = any ((select tenantry.workspace_ids())::uuid[]))
-- tenantry.is_member(), has_role() and role() answer for one workspace: for functions and checks,
-- not for per-row policies (a call per row costs what the sub-select costs once).

create schema tenantry;
revoke all on schema tenantry from public;
grant usage on schema tenantry to anon, authenticated, service_role;
-- Its definers are owned by service_role, which an installing role that is not a superuser can
-- only hand them to when service_role may create in the schema (as for public and internal, 0001).
grant create on schema tenantry to service_role;

-- The caller's workspaces where they hold at least min_role, without those locked behind MFA for
-- this session; empty for anonymous callers and for callers who no longer stand.
create function tenantry.workspace_ids(min_role public.workspace_role default 'viewer')
returns uuid[]
language sql stable security definer set search_path = ''
as $$
  select coalesce(array_agg(m.workspace_id), '{}') from public.workspace_members m
  where m.user_id = (select auth.uid()) and m.role >= min_role
    and ((select coalesce(auth.jwt()->>'aal', '') = 'aal2')
         or not exists (select 1 from public.workspaces w where w.id = m.workspace_id and w.require_mfa))
    and (select internal.caller_standing()) = 'active'
$$;

-- The caller's role in one workspace, under the same rules; null when they may not reach it.
create function tenantry.role(workspace_id uuid) returns public.workspace_role
language sql stable security definer set search_path = ''
as $$
  select m.role from public.workspace_members m
  where m.workspace_id = role.workspace_id and m.user_id = (select auth.uid())
    and ((select coalesce(auth.jwt()->>'aal', '') = 'aal2')
         or not exists (select 1 from public.workspaces w where w.id = m.workspace_id and w.require_mfa))
    and (select internal.caller_standing()) = 'active'
$$;

-- The caller may reach the workspace (any role).
create function tenantry.is_member(workspace_id uuid) returns boolean
language sql stable set search_path = ''
as $$
  select tenantry.role(workspace_id) is not null
$$;

-- The caller holds at least min_role in the workspace ('viewer' < 'member' < 'admin' < 'owner').
create function tenantry.has_role(workspace_id uuid, min_role public.workspace_role) returns boolean
language sql stable set search_path = ''
as $$
  select coalesce(tenantry.role(workspace_id) >= min_role, false)
$$;

alter function tenantry.workspace_ids(public.workspace_role) owner to service_role;
alter function tenantry.role(uuid) owner to service_role;
revoke all on all functions in schema tenantry from public;
grant execute on all functions in schema tenantry to anon, authenticated, service_role;

-- Core policies use the same API. Each is the policy it replaces with the helper swapped; the
-- restrictive *_mfa policies of 0031 stay, guarding the rows other conditions admit (a member's
-- own membership row, an invitation to one's own address).
drop policy workspaces_read on public.workspaces;
drop policy workspaces_edit on public.workspaces;
drop policy workspaces_delete on public.workspaces;
create policy workspaces_read on public.workspaces for select to authenticated
  using (id = any ((select tenantry.workspace_ids())::uuid[]));
create policy workspaces_edit on public.workspaces for update to authenticated
  using (id = any ((select tenantry.workspace_ids('admin'))::uuid[]))
  with check (id = any ((select tenantry.workspace_ids('admin'))::uuid[]));
create policy workspaces_delete on public.workspaces for delete to authenticated
  using (id = any ((select tenantry.workspace_ids('owner'))::uuid[]));

drop policy members_read on public.workspace_members;
drop policy members_edit on public.workspace_members;
drop policy members_delete on public.workspace_members;
create policy members_read on public.workspace_members for select to authenticated
  using (workspace_id = any ((select tenantry.workspace_ids())::uuid[]));
create policy members_edit on public.workspace_members for update to authenticated
  using (workspace_id = any ((select tenantry.workspace_ids('admin'))::uuid[]))
  with check (workspace_id = any ((select tenantry.workspace_ids('admin'))::uuid[]));
create policy members_delete on public.workspace_members for delete to authenticated
  using (user_id = (select auth.uid()) or workspace_id = any ((select tenantry.workspace_ids('admin'))::uuid[]));

drop policy invitations_read on public.invitations;
create policy invitations_read on public.invitations for select to authenticated
  using (workspace_id = any ((select tenantry.workspace_ids('admin'))::uuid[]) or email = (select internal.my_email()));

drop policy activity_read on public.activity_events;
create policy activity_read on public.activity_events for select to authenticated
  using (workspace_id = any ((select tenantry.workspace_ids())::uuid[]));

drop policy subscriptions_read on public.subscriptions;
create policy subscriptions_read on public.subscriptions for select to authenticated
  using (workspace_id = any ((select tenantry.workspace_ids())::uuid[]));

drop policy projects_read on public.projects;
drop policy projects_insert on public.projects;
drop policy projects_edit on public.projects;
drop policy projects_delete on public.projects;
create policy projects_read on public.projects for select to authenticated
  using (workspace_id = any ((select tenantry.workspace_ids())::uuid[]));
create policy projects_insert on public.projects for insert to authenticated
  with check (workspace_id = any ((select tenantry.workspace_ids('member'))::uuid[]));
create policy projects_edit on public.projects for update to authenticated
  using (workspace_id = any ((select tenantry.workspace_ids('member'))::uuid[]))
  with check (workspace_id = any ((select tenantry.workspace_ids('member'))::uuid[]));
create policy projects_delete on public.projects for delete to authenticated
  using (workspace_id = any ((select tenantry.workspace_ids('member'))::uuid[]));

-- Coworkers (whose profiles the caller may read) come from the same workspaces.
create or replace function internal.my_coworker_ids() returns setof uuid
language sql stable security definer set search_path = ''
as $$
  select distinct m.user_id from public.workspace_members m
  where m.workspace_id = any ((select tenantry.workspace_ids())::uuid[])
$$;

-- The old helpers have no caller left: one way, not three.
drop function internal.my_workspace_id_array(public.workspace_role);
drop function internal.my_open_workspace_id_array(public.workspace_role);
