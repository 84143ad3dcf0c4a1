-- Hooks for the team's own tables (docs/build-on-tenantry.md): activity entries that reach the
-- workspace's activity feed and the digests, and plan limits enforced like projects' (0022).
--
-- Activity:
--   create trigger tasks_activity after insert or update or delete on public.tasks
--     for each row execute function tenantry.record_activity('task', 'title');
-- records task.created / task.updated / task.deleted with the row's title as the subject and
-- {"task_id": id} as data, acted by the caller; or call tenantry.log_activity(...) from a function.
--
-- Plan limits:
--   create trigger tasks_plan_limit before insert or update or delete on public.tasks
--     for each row execute function tenantry.enforce_plan_limit('tasks');
-- refuses an insert past the workspace plan's limit for "tasks" (BILLING_PLANS' "limits", or
-- FREE_PLAN_LIMITS for the free plan; no limit named = unlimited), and any change while the
-- workspace is read-only for an overdue payment, with PT402 (HTTP 402) as projects are refused.

-- Limits per plan for resources the service does not know by name; kept in step with
-- configuration at start-up (src/server/billing/entitlements.ts).
create table internal.plan_resource_limits (
  plan text not null,
  resource text not null check (resource ~ '^[a-z][a-z0-9_]{0,62}$'),
  max_rows integer check (max_rows is null or max_rows >= 0),
  primary key (plan, resource)
);
grant select, insert, update, delete on internal.plan_resource_limits to service_role;

-- Writes one activity entry for a workspace the caller may reach. Actions are noun.verb.
create function tenantry.log_activity(workspace_id uuid, action text, subject text default null,
  data jsonb default '{}') returns void
language plpgsql security definer set search_path = ''
as $$
begin
  if action !~ '^[a-z][a-z0-9_]{0,39}\.[a-z][a-z0-9_]{0,39}$' then
    raise exception 'Activity actions are written noun.verb in lower case, like task.created'
      using errcode = '22023';
  end if;
  if internal.acting_as_user() and not tenantry.is_member(log_activity.workspace_id) then
    raise exception 'Workspace not found' using errcode = 'PT404';
  end if;
  perform internal.log_activity(log_activity.workspace_id, action, left(subject, 200), coalesce(data, '{}'));
end
$$;

-- Trigger: <noun>.created|updated|deleted for the row, its subject from the named column.
create function tenantry.record_activity() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  noun text := tg_argv[0];
  subject_column text := tg_argv[1];
  changed jsonb;
  ws uuid;
begin
  if tg_op = 'DELETE' then
    changed := to_jsonb(old);
  else
    changed := to_jsonb(new);
  end if;
  ws := (changed->>'workspace_id')::uuid;
  -- A workspace being deleted takes its rows with it: that is not news to anyone.
  if tg_op = 'DELETE' and not exists (select 1 from public.workspaces w where w.id = ws) then
    return null;
  end if;
  perform internal.log_activity(
    ws,
    noun || '.' || case tg_op when 'INSERT' then 'created' when 'UPDATE' then 'updated' else 'deleted' end,
    left(changed->>subject_column, 200),
    jsonb_build_object(noun || '_id', changed->'id'));
  return null;
end
$$;

-- The limit of the workspace's current plan for a resource; null = unlimited.
create function tenantry.plan_limit(workspace_id uuid, resource text) returns integer
language sql stable security definer set search_path = ''
as $$
  select l.max_rows from internal.plan_resource_limits l
  where l.plan = (select e.plan from internal.workspace_entitlements(plan_limit.workspace_id) e)
    and l.resource = plan_limit.resource
$$;

-- Trigger: the table's rows per workspace stay within the plan's limit for the named resource.
create function tenantry.enforce_plan_limit() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  limited text := tg_argv[0];
  ws uuid;
  e record;
  allowed integer;
  used integer;
begin
  if not internal.acting_as_user() then
    return case when tg_op = 'DELETE' then old else new end;
  end if;
  ws := ((case when tg_op = 'DELETE' then to_jsonb(old) else to_jsonb(new) end)->>'workspace_id')::uuid;
  select * into e from internal.workspace_entitlements(ws);
  if e.read_only then
    raise exception 'This workspace is read-only until its overdue payment is made' using errcode = 'PT402',
      hint = 'An owner can update the payment method on the billing page';
  end if;
  if tg_op = 'INSERT' then
    select l.max_rows into allowed from internal.plan_resource_limits l
    where l.plan = e.plan and l.resource = limited;
    if allowed is not null then
      -- Serialised per workspace, so two inserts cannot both take the last place.
      perform 1 from public.workspaces w where w.id = ws for update;
      execute format('select count(*) from %I.%I where workspace_id = $1', tg_table_schema, tg_table_name)
        into used using ws;
      if used + 1 > allowed then
        raise exception 'This workspace has reached the % plan''s limit of % %', e.plan, allowed, limited
          using errcode = 'PT402', hint = 'Upgrade the plan or delete some first';
      end if;
    end if;
  end if;
  return case when tg_op = 'DELETE' then old else new end;
end
$$;

alter function tenantry.log_activity(uuid, text, text, jsonb) owner to service_role;
alter function tenantry.record_activity() owner to service_role;
alter function tenantry.plan_limit(uuid, text) owner to service_role;
alter function tenantry.enforce_plan_limit() owner to service_role;
revoke all on function tenantry.log_activity(uuid, text, text, jsonb), tenantry.record_activity(),
  tenantry.plan_limit(uuid, text), tenantry.enforce_plan_limit() from public;
grant execute on function tenantry.log_activity(uuid, text, text, jsonb), tenantry.record_activity(),
  tenantry.plan_limit(uuid, text), tenantry.enforce_plan_limit() to authenticated, service_role;
