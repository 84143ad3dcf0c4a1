-- The policy helpers cost less (decision 0029).
--
-- 1. They read the caller once. `m.user_id = auth.uid()` re-evaluated auth.uid() (a settings read
--    and a JSON parse of the claims) for every membership row the plan visited: with an index
--    scan once, but with a sequential scan or a join once per row, about 10 µs each; a user in a
--    thousand workspaces paid 12 ms per statement. `(select auth.uid())` is evaluated once.
--    Same for the aal test.
--
-- 2. Project rows are scoped by one membership lookup per statement instead of two.
--
-- Since 0031, reading projects evaluated two InitPlans: the permissive policy's
-- internal.my_workspace_id_array() and the restrictive projects_mfa's
-- internal.mfa_locked_workspace_ids(), each a security-definer function call with its own index
-- lookups. Projects are the table applications read most, so their policies now call one function
-- that answers the caller's workspaces at the given role minus those locked behind MFA for this
-- token. my(role) AND NOT locked is exactly what the two policies allowed together, for every
-- command, so projects_mfa is dropped.

create or replace function internal.my_workspace_id_array(min_role public.workspace_role default 'viewer')
returns uuid[]
language sql stable security definer set search_path = ''
as $$
  select coalesce(array_agg(m.workspace_id), '{}') from public.workspace_members m
  where m.user_id = (select auth.uid()) and m.role >= min_role
$$;

create or replace function internal.mfa_locked_workspace_ids() returns uuid[]
language sql stable security definer set search_path = ''
as $$
  select coalesce(array_agg(w.id), '{}') from public.workspace_members m
  join public.workspaces w on w.id = m.workspace_id
  where m.user_id = (select auth.uid()) and w.require_mfa
    and (select coalesce(auth.jwt()->>'aal', '') <> 'aal2')
$$;

-- The caller's workspaces where they hold at least `min_role`, without those that require MFA
-- while the token is at aal1 (the same test as internal.mfa_locked_workspace_ids()).
create function internal.my_open_workspace_id_array(min_role public.workspace_role default 'viewer')
returns uuid[]
language sql stable security definer set search_path = ''
as $$
  select coalesce(array_agg(m.workspace_id), '{}') from public.workspace_members m
  join public.workspaces w on w.id = m.workspace_id
  where m.user_id = (select auth.uid()) and m.role >= min_role
    and (not w.require_mfa or (select coalesce(auth.jwt()->>'aal', '') = 'aal2'))
$$;
alter function internal.my_open_workspace_id_array(public.workspace_role) owner to service_role;
revoke all on function internal.my_open_workspace_id_array(public.workspace_role) from public;
grant execute on function internal.my_open_workspace_id_array(public.workspace_role) to authenticated;

drop policy projects_mfa on public.projects;
drop policy projects_read on public.projects;
drop policy projects_insert on public.projects;
drop policy projects_edit on public.projects;
drop policy projects_delete on public.projects;
create policy projects_read on public.projects for select to authenticated
  using (workspace_id = any ((select internal.my_open_workspace_id_array())::uuid[]));
create policy projects_insert on public.projects for insert to authenticated
  with check (workspace_id = any ((select internal.my_open_workspace_id_array('member'))::uuid[]));
create policy projects_edit on public.projects for update to authenticated
  using (workspace_id = any ((select internal.my_open_workspace_id_array('member'))::uuid[]))
  with check (workspace_id = any ((select internal.my_open_workspace_id_array('member'))::uuid[]));
create policy projects_delete on public.projects for delete to authenticated
  using (workspace_id = any ((select internal.my_open_workspace_id_array('member'))::uuid[]));
