-- A user may own at most a configured number of workspaces (docs/decisions/0046-workspaces-per-owner-and-bounded-pages.md).
--
-- Creating workspaces was free and unbounded: one account made 2,000 in ten seconds, and every
-- page that lists them (the workspace list, the switcher on every page) grew with it. The limit
-- lives in the database, beside the insert it guards, so it holds for every path that creates a
-- workspace on behalf of a user: create_workspace over the data API, the web app's form, anything
-- added later. Trusted server work (the service role, migrations, seeding) is not limited.
--
-- What counts is the workspaces the user owns (role 'owner'), not every membership: joining a
-- workspace is decided by the people who invite, and someone invited to many teams should still
-- be able to create their own. Deleting a workspace, or handing its ownership over and leaving,
-- frees a place at once. Accounts that already own more than the limit keep them; they only
-- cannot create more.

alter table internal.app_settings
  add column max_workspaces_per_user integer not null default 100 check (max_workspaces_per_user > 0);

create function internal.limit_owned_workspaces() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  uid uuid := auth.uid();
  cap integer;
  owned integer;
begin
  if not internal.acting_as_user() or uid is null then
    return new;
  end if;
  -- Two creations by the same user at once would otherwise both see room for one more.
  perform pg_advisory_xact_lock(hashtextextended('workspaces-owned/' || uid::text, 0));
  select s.max_workspaces_per_user into cap from internal.app_settings s;
  select count(*) into owned from public.workspace_members m where m.user_id = uid and m.role = 'owner';
  if owned >= cap then
    -- The data API answers 403 with code TNTRY403; the web app shows the message.
    raise sqlstate 'PGRST' using
      message = json_build_object(
        'code', 'TNTRY403',
        'message', format('You already own %s workspaces, the most one account may own', owned),
        'details', format('Each account may own up to %s workspaces (MAX_WORKSPACES_PER_USER)', cap),
        'hint', 'Delete a workspace you no longer use, or make someone else its owner and leave it'
      )::text,
      detail = json_build_object('status', 403)::text;
  end if;
  return new;
end
$$;

create trigger workspaces_within_owner_limit before insert on public.workspaces
  for each row execute function internal.limit_owned_workspaces();
-- Definer functions run as service_role (bypasses row-level security, nothing more), never as the
-- superuser that applies migrations.
alter function internal.limit_owned_workspaces() owner to service_role;
