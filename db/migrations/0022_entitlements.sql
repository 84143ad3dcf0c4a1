-- Plan entitlements, enforced in the database so direct client writes cannot exceed them:
-- seats (members plus open invitations) and projects per workspace, from the workspace's plan
-- while its subscription is active, trialing or past due, otherwise the free plan. A payment
-- overdue beyond the grace period makes domain data (projects) read-only until it is paid.
-- Limits are kept in step with configuration at start-up (src/server/billing/entitlements.ts);
-- the rows below are the defaults. Refusals raise PT402 (HTTP 402) naming the limit.

create table internal.plan_limits (
  plan text primary key,
  -- null = unlimited
  seats integer check (seats is null or seats > 0),
  projects integer check (projects is null or projects >= 0)
);
insert into internal.plan_limits (plan, seats, projects) values ('free', 10, 1000);

create table internal.billing_settings (
  id boolean primary key default true check (id),
  grace_days integer not null default 7 check (grace_days >= 0)
);
insert into internal.billing_settings default values;
grant select on internal.plan_limits, internal.billing_settings to service_role;

create function internal.workspace_entitlements(ws uuid, out plan text, out seats integer, out projects integer,
  out read_only boolean)
language plpgsql stable security definer set search_path = ''
as $$
declare
  s public.subscriptions;
  grace integer;
begin
  select * into s from public.subscriptions where workspace_id = ws;
  plan := case when s.status in ('active', 'trialing', 'past_due') then coalesce(s.plan, 'free') else 'free' end;
  select l.seats, l.projects into seats, projects from internal.plan_limits l where l.plan = workspace_entitlements.plan;
  if not found then
    plan := 'free';
    select l.seats, l.projects into seats, projects from internal.plan_limits l where l.plan = 'free';
  end if;
  select b.grace_days into grace from internal.billing_settings b;
  read_only := s.past_due_since is not null and s.past_due_since < now() - make_interval(days => coalesce(grace, 7));
end
$$;

-- Seats: members plus invitations still open (not accepted, revoked, declined or expired).
create function internal.enforce_seats() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  e record;
  used integer;
begin
  if not internal.acting_as_user() then
    return new;
  end if;
  -- Serialise seat changes per workspace so two invitations cannot both take the last seat.
  perform 1 from public.workspaces w where w.id = new.workspace_id for update;
  select * into e from internal.workspace_entitlements(new.workspace_id);
  if e.seats is null then
    return new;
  end if;
  select (select count(*) from public.workspace_members m where m.workspace_id = new.workspace_id)
       + (select count(*) from public.invitations i where i.workspace_id = new.workspace_id
            and i.accepted_at is null and i.revoked_at is null and i.declined_at is null and i.expires_at > now())
    into used;
  if used + 1 > e.seats then
    raise exception 'This workspace has used all % seats of the % plan (members and pending invitations)', e.seats, e.plan
      using errcode = 'PT402', hint = 'Upgrade the plan or revoke a pending invitation';
  end if;
  return new;
end
$$;
create trigger members_enforce_seats before insert on public.workspace_members
  for each row execute function internal.enforce_seats();
create trigger invitations_enforce_seats before insert on public.invitations
  for each row execute function internal.enforce_seats();

create function internal.enforce_projects() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  ws uuid := coalesce(new.workspace_id, old.workspace_id);
  e record;
  used integer;
begin
  if not internal.acting_as_user() then
    return coalesce(new, old);
  end if;
  select * into e from internal.workspace_entitlements(ws);
  if e.read_only then
    raise exception 'This workspace is read-only until its overdue payment is made' using errcode = 'PT402',
      hint = 'An owner can update the payment method on the billing page';
  end if;
  if tg_op = 'INSERT' and e.projects is not null then
    perform 1 from public.workspaces w where w.id = ws for update;
    select count(*) into used from public.projects p where p.workspace_id = ws;
    if used + 1 > e.projects then
      raise exception 'This workspace has reached the % plan''s limit of % projects', e.plan, e.projects
        using errcode = 'PT402', hint = 'Upgrade the plan or delete a project';
    end if;
  end if;
  return coalesce(new, old);
end
$$;
create trigger projects_enforce_plan before insert or update or delete on public.projects
  for each row execute function internal.enforce_projects();

alter function internal.workspace_entitlements(uuid) owner to service_role;
alter function internal.enforce_seats() owner to service_role;
alter function internal.enforce_projects() owner to service_role;
revoke execute on function internal.workspace_entitlements(uuid), internal.enforce_seats(), internal.enforce_projects() from public;
grant execute on function internal.workspace_entitlements(uuid) to service_role;
