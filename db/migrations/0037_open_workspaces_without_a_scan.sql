-- The caller's open workspaces without reading every workspace (decision 0030).
--
-- internal.my_open_workspace_id_array() joined the caller's memberships to public.workspaces to
-- drop those that require MFA. Once a caller belongs to a few hundred workspaces the planner
-- hashes that join, and the hash side is a sequential scan of every workspace of every tenant:
-- 9 ms per statement at 18,500 workspaces for a member of 1,167, on every read, insert, update
-- and delete of projects, and growing with the whole installation rather than with the caller.
--
-- Workspaces that require MFA are the exception, so they get a partial index, and the helper
-- asks it only whether a membership's workspace is one of them (at aal2 it does not ask at all).
-- The planner probes the small index per membership or hashes it once, whichever costs less;
-- either way the cost follows the caller's memberships and the number of MFA workspaces.
-- internal.mfa_locked_workspace_ids() keeps its join, which the index now drives.

create index workspaces_require_mfa_idx on public.workspaces (id) where require_mfa;

create or replace function internal.my_open_workspace_id_array(min_role public.workspace_role default 'viewer')
returns uuid[]
language sql stable security definer set search_path = ''
as $$
  select coalesce(array_agg(m.workspace_id), '{}') from public.workspace_members m
  where m.user_id = (select auth.uid()) and m.role >= min_role
    and ((select coalesce(auth.jwt()->>'aal', '') = 'aal2')
         or not exists (select 1 from public.workspaces w where w.id = m.workspace_id and w.require_mfa))
$$;
