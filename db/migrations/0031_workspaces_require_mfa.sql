-- Workspaces that require a second factor of their members (docs/decisions/0024).
--
-- An owner or admin turns `require_mfa` on (the data API's PATCH on workspaces, or the settings
-- page), and only from a session at aal2, so nobody locks themselves out by accident. From then
-- on a member whose access token says `aal1` (auth.jwt()->>'aal') sees nothing of the workspace:
-- restrictive policies on every workspace-scoped table hide its rows, and the operations
-- (invite_member, update_member_role, ...) refuse it through internal.require_role.

alter table public.workspaces add column require_mfa boolean not null default false;
grant update (require_mfa) on public.workspaces to authenticated;

-- True when the request's token has passed a second factor.
create function internal.at_aal2() returns boolean
language sql stable set search_path = ''
as $$
  select coalesce(auth.jwt()->>'aal', '') = 'aal2'
$$;

-- The caller's workspaces that require MFA while the token is at aal1: the rows policies hide.
-- Evaluated once per statement (an InitPlan), like internal.my_workspace_id_array; the aal test
-- is written out rather than calling internal.at_aal2() so a policy costs one call, not one per row.
create function internal.mfa_locked_workspace_ids() returns uuid[]
language sql stable security definer set search_path = ''
as $$
  select coalesce(array_agg(w.id), '{}') from public.workspace_members m
  join public.workspaces w on w.id = m.workspace_id
  where m.user_id = auth.uid() and w.require_mfa and coalesce(auth.jwt()->>'aal', '') <> 'aal2'
$$;

-- The same workspaces with their names, for the web app's "complete the second step" page; not
-- reachable over the data API (it exposes only `public`).
create function internal.my_mfa_locked_workspaces()
returns table (id uuid, slug text, name text)
language sql stable security definer set search_path = ''
as $$
  select w.id, w.slug, w.name from public.workspace_members m
  join public.workspaces w on w.id = m.workspace_id
  where m.user_id = auth.uid() and w.require_mfa and not internal.at_aal2()
  order by w.name
$$;

create policy workspaces_mfa on public.workspaces as restrictive for all to authenticated
  using (id <> all ((select internal.mfa_locked_workspace_ids())::uuid[]))
  with check (id <> all ((select internal.mfa_locked_workspace_ids())::uuid[]));
create policy members_mfa on public.workspace_members as restrictive for all to authenticated
  using (workspace_id <> all ((select internal.mfa_locked_workspace_ids())::uuid[]))
  with check (workspace_id <> all ((select internal.mfa_locked_workspace_ids())::uuid[]));
create policy activity_mfa on public.activity_events as restrictive for all to authenticated
  using (workspace_id <> all ((select internal.mfa_locked_workspace_ids())::uuid[]));
create policy subscriptions_mfa on public.subscriptions as restrictive for all to authenticated
  using (workspace_id <> all ((select internal.mfa_locked_workspace_ids())::uuid[]));
create policy projects_mfa on public.projects as restrictive for all to authenticated
  using (workspace_id <> all ((select internal.mfa_locked_workspace_ids())::uuid[]))
  with check (workspace_id <> all ((select internal.mfa_locked_workspace_ids())::uuid[]));
-- Invitations stay visible to the invitee (matched by e-mail): they are not yet a member. The
-- workspace's admins at aal1 lose sight of them.
create policy invitations_mfa on public.invitations as restrictive for all to authenticated
  using (workspace_id <> all ((select internal.mfa_locked_workspace_ids())::uuid[])
         or email = (select internal.my_email()));

-- Turning the requirement on or off takes a session at aal2 (for a user; the service role and
-- server-internal work may). Off needs aal2 too: at aal1 the row is hidden anyway.
create function internal.guard_require_mfa() returns trigger
language plpgsql set search_path = ''
as $$
begin
  if new.require_mfa is distinct from old.require_mfa and internal.acting_as_user()
     and not internal.at_aal2() then
    raise exception 'Set up two-step verification for yourself and sign in with it before changing this'
      using errcode = '42501';
  end if;
  return new;
end
$$;
create trigger workspaces_guard_require_mfa before update of require_mfa on public.workspaces
  for each row execute function internal.guard_require_mfa();

-- The operations' membership check (0020), now also refusing members at aal1 of a workspace that
-- requires MFA. The same contract otherwise: not a member reads as not found.
create or replace function internal.require_role(ws uuid, min_role public.workspace_role)
returns public.workspace_role
language plpgsql stable security definer set search_path = ''
as $$
declare
  caller public.workspace_role := internal.my_role(ws);
begin
  if caller is null then
    raise exception 'Workspace not found' using errcode = 'PT404';
  end if;
  if ws = any (internal.mfa_locked_workspace_ids()) then
    raise exception 'This workspace requires two-step verification: complete it to continue'
      using errcode = '42501';
  end if;
  if caller < min_role then
    raise exception 'This needs the % role or higher in this workspace', min_role using errcode = '42501';
  end if;
  return caller;
end
$$;

alter function internal.mfa_locked_workspace_ids() owner to service_role;
alter function internal.my_mfa_locked_workspaces() owner to service_role;
alter function internal.require_role(uuid, public.workspace_role) owner to service_role;

grant execute on function internal.at_aal2(), internal.mfa_locked_workspace_ids(),
  internal.my_mfa_locked_workspaces(), internal.guard_require_mfa() to authenticated;
