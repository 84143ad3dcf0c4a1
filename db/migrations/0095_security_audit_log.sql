-- The security audit log (decision 0089): who did what to which account or workspace, from where,
-- written in the same transaction as the change and never changed or removed afterwards except by
-- the retention job. Workspace changes are recorded here by triggers, so every path (data API,
-- web pages, server code, an operator's SQL) leaves its line; the identity API adds the account
-- events (sign-ins, factors, passwords, sessions) through internal.audit_record.
--
-- Who acted: the caller of the statement (auth.uid()) when a user, else the kind of caller
-- ('service' for the service_role key, 'system' for the service's own work such as the billing
-- webhook). From where: the client address and user agent the service found for the request, in
-- the transaction settings tenantry.client_address / tenantry.user_agent (the data API and the
-- web pages set them; a client cannot), the user agent falling back to request.headers.

create table public.audit_events (
  id bigint generated always as identity primary key,
  created_at timestamptz not null default now(),
  -- the person who acted, when a person did; kept after their account goes (no foreign key)
  actor_id uuid,
  actor_type text not null check (actor_type in ('user', 'anonymous', 'service', 'system')),
  -- the account the event is about (the one signing in, the member whose role changed)
  user_id uuid,
  action text not null check (action ~ '^[a-z][a-z0-9_.]{0,63}$'),
  target_type text check (target_type is null or char_length(target_type) <= 40),
  target_id text check (target_id is null or char_length(target_id) <= 200),
  -- kept after the workspace is deleted: its history is what an investigation needs
  workspace_id uuid,
  ip_address inet,
  user_agent text check (user_agent is null or char_length(user_agent) <= 512),
  details jsonb not null default '{}' check (pg_column_size(details) <= 4096)
);
create index audit_events_workspace_idx on public.audit_events (workspace_id, created_at desc)
  where workspace_id is not null;
create index audit_events_user_idx on public.audit_events (user_id, created_at desc) where user_id is not null;
create index audit_events_created_idx on public.audit_events (created_at);

alter table public.audit_events enable row level security;
alter table public.audit_events force row level security;

-- Owners and admins read their workspace's log; everyone reads the account events about them.
create policy audit_workspace_read on public.audit_events for select to authenticated
  using (workspace_id = any ((select tenantry.workspace_ids('admin'))::uuid[]));
create policy audit_own_read on public.audit_events for select to authenticated
  using (workspace_id is null and user_id = (select auth.uid())
         and (select internal.caller_standing()) = 'active');

-- Reading only. service_role may add a line (its definer functions write them) but, like every
-- role, never change or remove one: the trigger below refuses the table's owner too.
revoke all on public.audit_events from public, anon, authenticated, service_role;
grant select on public.audit_events to authenticated, service_role;
grant insert on public.audit_events to service_role;

-- The retention job's window, set only by internal.purge_audit_events for its own statement.
create function internal.refuse_audit_change() returns trigger
language plpgsql set search_path = ''
as $$
declare
  before_text text := current_setting('tenantry.audit_purge_before', true);
begin
  if tg_op = 'DELETE' and coalesce(before_text, '') <> '' then
    -- Only lines older than the window, and never one younger than a day, whoever asks.
    if old.created_at < before_text::timestamptz and old.created_at < now() - interval '1 day' then
      return old;
    end if;
  end if;
  raise exception 'The audit log is append-only: its lines are never changed or removed'
    using errcode = '42501';
end
$$;
create trigger audit_events_append_only before update or delete on public.audit_events
  for each row execute function internal.refuse_audit_change();
create function internal.refuse_audit_truncate() returns trigger
language plpgsql set search_path = ''
as $$
begin
  raise exception 'The audit log is append-only: its lines are never changed or removed'
    using errcode = '42501';
end
$$;
create trigger audit_events_no_truncate before truncate on public.audit_events
  for each statement execute function internal.refuse_audit_truncate();

-- Retention: removes the lines older than keep_days (AUDIT_RETENTION_DAYS), run by the scheduler
-- as the service's own connection. Answers how many went.
create function internal.purge_audit_events(keep_days integer) returns bigint
language plpgsql set search_path = ''
as $$
declare
  removed bigint;
begin
  if keep_days is null or keep_days < 1 then
    raise exception 'Audit lines are kept at least a day' using errcode = '22023';
  end if;
  perform set_config('tenantry.audit_purge_before', (now() - make_interval(days => keep_days))::text, true);
  delete from public.audit_events where created_at < now() - make_interval(days => keep_days);
  get diagnostics removed = row_count;
  perform set_config('tenantry.audit_purge_before', '', true);
  return removed;
end
$$;
revoke all on function internal.purge_audit_events(integer) from public;

-- The request's client address, when the service set one it trusts.
create function internal.audit_client_address() returns inet
language plpgsql stable set search_path = ''
as $$
declare
  raw text := nullif(current_setting('tenantry.client_address', true), '');
begin
  return raw::inet;
exception when invalid_text_representation then
  return null;
end
$$;

-- The request's user agent: the one the service set, else the data API's request headers.
create function internal.audit_user_agent() returns text
language plpgsql stable set search_path = ''
as $$
declare
  agent text := nullif(current_setting('tenantry.user_agent', true), '');
begin
  if agent is null then
    begin
      agent := nullif(current_setting('request.headers', true), '')::jsonb->>'user-agent';
    exception when others then
      agent := null;
    end;
  end if;
  return left(agent, 512);
end
$$;

-- Writes one line acted by the statement's caller, from the request's address and user agent.
create function internal.audit_record(action text, workspace_id uuid, user_id uuid, target_type text,
  target_id text, details jsonb default '{}') returns void
language sql security definer set search_path = ''
as $$
  insert into public.audit_events (actor_id, actor_type, user_id, action, target_type, target_id,
    workspace_id, ip_address, user_agent, details)
  values (
    auth.uid(),
    case when auth.uid() is not null then 'user'
         when coalesce(auth.role(), '') = 'service_role' then 'service'
         when coalesce(auth.role(), '') = 'anon' then 'anonymous'
         else 'system' end,
    audit_record.user_id, audit_record.action, audit_record.target_type, audit_record.target_id,
    audit_record.workspace_id, internal.audit_client_address(), internal.audit_user_agent(),
    coalesce(audit_record.details, '{}'::jsonb))
$$;
alter function internal.audit_record(text, uuid, uuid, text, text, jsonb) owner to service_role;
revoke all on function internal.audit_record(text, uuid, uuid, text, text, jsonb) from public;

-- Members: added, role changed, removed (not when the workspace itself goes: that is one line).
create function internal.audit_members() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform internal.audit_record('member.added', new.workspace_id, new.user_id, 'user', new.user_id::text,
      jsonb_build_object('role', new.role));
  elsif tg_op = 'UPDATE' then
    if new.role is distinct from old.role then
      perform internal.audit_record('member.role_changed', new.workspace_id, new.user_id, 'user',
        new.user_id::text, jsonb_build_object('from', old.role, 'to', new.role));
    end if;
  elsif exists (select 1 from public.workspaces w where w.id = old.workspace_id) then
    perform internal.audit_record(
      case when old.user_id = auth.uid() then 'member.left' else 'member.removed' end,
      old.workspace_id, old.user_id, 'user', old.user_id::text, jsonb_build_object('role', old.role));
  end if;
  return null;
end
$$;
create trigger workspace_members_audit after insert or update or delete on public.workspace_members
  for each row execute function internal.audit_members();

-- Invitations: created, revoked, accepted, declined (the token never: it is not in this table).
create function internal.audit_invitations() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  facts jsonb := jsonb_build_object('email', new.email, 'role', new.role);
begin
  if tg_op = 'INSERT' then
    perform internal.audit_record('invitation.created', new.workspace_id, null, 'invitation', new.id::text, facts);
  elsif new.revoked_at is not null and old.revoked_at is null then
    perform internal.audit_record('invitation.revoked', new.workspace_id, null, 'invitation', new.id::text, facts);
  elsif new.accepted_at is not null and old.accepted_at is null then
    perform internal.audit_record('invitation.accepted', new.workspace_id, new.accepted_by, 'invitation',
      new.id::text, facts);
  elsif new.declined_at is not null and old.declined_at is null then
    perform internal.audit_record('invitation.declined', new.workspace_id, null, 'invitation', new.id::text, facts);
  end if;
  return null;
end
$$;
create trigger invitations_audit after insert or update on public.invitations
  for each row execute function internal.audit_invitations();

-- Workspace settings: which settings changed, with their old and new values; and deletion.
create function internal.audit_workspaces() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  before_row jsonb;
  after_row jsonb;
  changes jsonb := '{}';
  k text;
begin
  if tg_op = 'DELETE' then
    perform internal.audit_record('workspace.deleted', old.id, null, 'workspace', old.id::text,
      jsonb_build_object('name', old.name, 'slug', old.slug));
    return null;
  end if;
  before_row := to_jsonb(old) - 'updated_at';
  after_row := to_jsonb(new) - 'updated_at';
  for k in select jsonb_object_keys(after_row) loop
    if after_row->k is distinct from before_row->k then
      changes := changes || jsonb_build_object(k, jsonb_build_object('from', before_row->k, 'to', after_row->k));
    end if;
  end loop;
  if changes <> '{}' then
    perform internal.audit_record('workspace.settings_changed', new.id, null, 'workspace', new.id::text,
      jsonb_build_object('changes', changes));
  end if;
  return null;
end
$$;
create trigger workspaces_audit after update or delete on public.workspaces
  for each row execute function internal.audit_workspaces();

-- Billing: the plan and the payment status, as the provider's webhook moves them.
create function internal.audit_subscriptions() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    if new.plan <> 'free' or new.status <> 'active' then
      perform internal.audit_record('billing.plan_changed', new.workspace_id, null, 'subscription',
        new.workspace_id::text, jsonb_build_object('from', 'free', 'to', new.plan, 'status', new.status));
    end if;
    return null;
  end if;
  if new.plan is distinct from old.plan then
    perform internal.audit_record('billing.plan_changed', new.workspace_id, null, 'subscription',
      new.workspace_id::text, jsonb_build_object('from', old.plan, 'to', new.plan));
  end if;
  if new.status is distinct from old.status then
    perform internal.audit_record('billing.status_changed', new.workspace_id, null, 'subscription',
      new.workspace_id::text, jsonb_build_object('from', old.status, 'to', new.status));
  end if;
  if new.cancel_at_period_end is distinct from old.cancel_at_period_end then
    perform internal.audit_record('billing.cancellation_changed', new.workspace_id, null, 'subscription',
      new.workspace_id::text, jsonb_build_object('cancel_at_period_end', new.cancel_at_period_end));
  end if;
  return null;
end
$$;
create trigger subscriptions_audit after insert or update on public.subscriptions
  for each row execute function internal.audit_subscriptions();

alter function internal.audit_members() owner to service_role;
alter function internal.audit_invitations() owner to service_role;
alter function internal.audit_workspaces() owner to service_role;
alter function internal.audit_subscriptions() owner to service_role;

-- An export of the log is itself a line in it: the caller must be an owner or admin there.
create function public.record_audit_export(workspace_id uuid, format text, row_count integer)
returns void
language plpgsql security definer set search_path = ''
as $$
begin
  if not tenantry.has_role(record_audit_export.workspace_id, 'admin') then
    raise exception 'Workspace not found' using errcode = 'PT404';
  end if;
  if format not in ('csv', 'json') then
    raise exception 'Exports are csv or json' using errcode = '22023';
  end if;
  perform internal.audit_record('audit.exported', record_audit_export.workspace_id, null, 'workspace',
    record_audit_export.workspace_id::text,
    jsonb_build_object('format', format, 'rows', greatest(coalesce(row_count, 0), 0)));
end
$$;
alter function public.record_audit_export(uuid, text, integer) owner to service_role;
revoke all on function public.record_audit_export(uuid, text, integer) from public;
grant execute on function public.record_audit_export(uuid, text, integer) to authenticated;

-- GoTrue's auth.audit_log_entries, for tools that read it: the account events, in its shape.
create view auth.audit_log_entries with (security_barrier) as
  select '00000000-0000-0000-0000-000000000000'::uuid as instance_id,
    (md5('audit_events:' || e.id::text))::uuid as id,
    jsonb_strip_nulls(jsonb_build_object(
      'actor_id', coalesce(e.actor_id, e.user_id),
      'actor_username', coalesce(nullif(u.phone, ''), u.email),
      'actor_via_sso', false,
      'action', e.action,
      'log_type', case
        when e.action in ('login', 'login_failed', 'logout', 'invite_accepted') then 'account'
        when e.action in ('token_revoked', 'token_refreshed') then 'token'
        when e.action like 'factor_%' or e.action in ('verification_attempted', 'challenge_created') then 'factor'
        else 'user' end,
      'traits', nullif(e.details, '{}'::jsonb))) as payload,
    e.created_at,
    coalesce(host(e.ip_address), '') as ip_address
  from public.audit_events e
  left join auth.users u on u.id = coalesce(e.actor_id, e.user_id)
  where e.workspace_id is null;
revoke all on auth.audit_log_entries from public, anon, authenticated;
grant select on auth.audit_log_entries to service_role;
