-- Outgoing webhooks (decision 0094): a workspace's owners and admins register HTTP endpoints that
-- receive its events, signed the Standard Webhooks way.
--
-- Events are written by triggers (and by tenantry.emit_webhook, the platform hook application
-- tables call from their own triggers) into internal.webhook_messages in the same transaction as
-- the change, one row per subscribed endpoint: a rolled-back change sends nothing. The service's
-- deliverer (src/server/webhooks/delivery.ts) claims due rows with FOR UPDATE SKIP LOCKED, POSTs
-- them, logs each attempt in internal.webhook_attempts and reschedules failures.
--
-- Everything lives in the internal schema, which the data API does not expose: clients reach
-- endpoints and deliveries only through the functions below, which check the caller's role in the
-- workspace (owner or admin) through the tenancy API. The signing secret is returned by creation
-- and rotation only; no function ever reads it back to a client.

-- Operator switches the database needs at registration (kept in step with configuration at start).
create table if not exists internal.webhook_settings (
  only_row boolean primary key default true check (only_row),
  allow_private_destinations boolean not null default false,
  -- Destinations allowed although private (host names or literal addresses), e.g. an internal relay.
  allowed_hosts text[] not null default '{}',
  require_https boolean not null default false
);
insert into internal.webhook_settings (only_row) values (true) on conflict do nothing;

create table if not exists internal.webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  url text not null check (char_length(url) between 10 and 2000),
  description text not null default '' check (char_length(description) <= 500),
  event_types text[] not null check (cardinality(event_types) between 1 and 50),
  enabled boolean not null default true,
  -- 'whsec_' || base64 of 32 random bytes; readable by the service only.
  secret text not null check (secret ~ '^whsec_[A-Za-z0-9+/]{43}=$'),
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  -- Set when the deliverer turns the endpoint off after repeated failure (cleared on re-enable).
  disabled_reason text,
  consecutive_failures integer not null default 0,
  failing_since timestamptz
);
create index if not exists webhook_endpoints_workspace_idx on internal.webhook_endpoints (workspace_id, created_at);
create index if not exists webhook_endpoints_created_by_idx on internal.webhook_endpoints (created_by);

create table if not exists internal.webhook_messages (
  id bigserial primary key,
  endpoint_id uuid not null references internal.webhook_endpoints (id) on delete cascade,
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  -- The webhook-id header: stable across retries and replays, so receivers can deduplicate.
  webhook_id text not null unique default 'msg_' || replace(gen_random_uuid()::text, '-', ''),
  event_type text not null,
  -- The body sent: {type, timestamp, data}.
  payload jsonb not null,
  created_at timestamptz not null default now(),
  available_at timestamptz not null default now(),
  leased_until timestamptz,
  attempts integer not null default 0,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
  -- Set by a replay from the page or API: the next attempt is logged as manual and is not retried.
  manual boolean not null default false,
  delivered_at timestamptz
);
create index if not exists webhook_messages_due_idx on internal.webhook_messages (available_at, id)
  where status = 'pending';
create index if not exists webhook_messages_endpoint_idx on internal.webhook_messages (endpoint_id, id desc);
create index if not exists webhook_messages_workspace_idx on internal.webhook_messages (workspace_id);

create table if not exists internal.webhook_attempts (
  id bigserial primary key,
  message_id bigint not null references internal.webhook_messages (id) on delete cascade,
  attempted_at timestamptz not null default now(),
  status_code integer,
  duration_ms integer not null,
  error text,
  response_excerpt text,
  manual boolean not null default false
);
create index if not exists webhook_attempts_message_idx on internal.webhook_attempts (message_id, id);

-- Not part of any exposed schema; RLS on as a second wall should a grant ever be added by mistake.
alter table internal.webhook_settings enable row level security;
alter table internal.webhook_endpoints enable row level security;
alter table internal.webhook_messages enable row level security;
alter table internal.webhook_attempts enable row level security;
revoke all on internal.webhook_settings, internal.webhook_endpoints, internal.webhook_messages,
  internal.webhook_attempts from public, anon, authenticated;
grant select, update on internal.webhook_settings to service_role;
grant select, insert, update, delete on internal.webhook_endpoints, internal.webhook_messages,
  internal.webhook_attempts to service_role;
grant usage on sequence internal.webhook_messages_id_seq, internal.webhook_attempts_id_seq to service_role;

-- The events the platform sends; application events are any other dotted name (see emit_webhook).
create or replace function internal.webhook_event_types() returns text[]
language sql immutable set search_path = ''
as $$
  select array['project.created', 'project.updated', 'project.deleted', 'member.added', 'member.removed',
    'member.role_changed', 'invitation.created', 'invitation.accepted', 'invitation.revoked',
    'billing.subscription_updated', 'webhook.test']
$$;

-- Refuses a destination the service must not call: not http(s), credentials in the URL, or (unless
-- the operator allows it) a literal loopback, private, link-local, CGNAT, multicast or unspecified
-- address, or a localhost name. Host names are resolved and checked again at every delivery.
create or replace function internal.webhook_check_url(url text) returns void
language plpgsql stable set search_path = ''
as $$
declare
  settings internal.webhook_settings := (select s from internal.webhook_settings s);
  parts text[] := regexp_match(url, '^(https?)://([^/?#]*)([/?#].*)?$', 'i');
  authority text;
  host text;
  address inet;
begin
  if parts is null then
    raise exception 'A webhook URL must start with http:// or https://' using errcode = '22023';
  end if;
  authority := parts[2];
  if authority like '%@%' then
    raise exception 'A webhook URL cannot carry a user name or password' using errcode = '22023';
  end if;
  host := lower(coalesce((regexp_match(authority, '^\[([0-9a-fA-F:.]+)\](:[0-9]{1,5})?$'))[1],
    (regexp_match(authority, '^([^:\[\]]+)(:[0-9]{1,5})?$'))[1], ''));
  if host = '' then
    raise exception 'A webhook URL needs a host' using errcode = '22023';
  end if;
  if settings.require_https and lower(parts[1]) <> 'https' then
    raise exception 'A webhook URL must use https' using errcode = '22023';
  end if;
  if settings.allow_private_destinations or host = any (settings.allowed_hosts) then
    return;
  end if;
  if host = 'localhost' or host like '%.localhost' or host like '%.local' or host like '%.internal' then
    raise exception 'Webhooks cannot be sent to %: it is a local or internal address', host
      using errcode = '22023';
  end if;
  begin
    address := host::inet;
  exception when others then
    return; -- a name: checked on the address it resolves to, at each delivery
  end;
  if internal.webhook_address_refused(address) then
    raise exception 'Webhooks cannot be sent to %: it is a loopback, private, link-local or reserved address',
      host using errcode = '22023';
  end if;
end
$$;

create or replace function internal.webhook_address_refused(address inet) returns boolean
language sql immutable set search_path = ''
as $$
  select case when family(address) = 4 then
      address << any (array['0.0.0.0/8', '10.0.0.0/8', '100.64.0.0/10', '127.0.0.0/8', '169.254.0.0/16',
        '172.16.0.0/12', '192.168.0.0/16', '224.0.0.0/4', '240.0.0.0/4']::inet[])
    else
      -- IPv4 written as IPv6 (::a.b.c.d, ::ffff:a.b.c.d, NAT64 64:ff9b::a.b.c.d) is refused whole:
      -- it is how a private IPv4 address slips past a check that only knows IPv4.
      address <<= any (array['::/96', '::ffff:0:0/96', '64:ff9b::/96', 'fc00::/7', 'fe80::/10',
        'ff00::/8']::inet[])
    end
$$;

-- A new 'whsec_' secret of 32 bytes from PostgreSQL's strong random source.
create or replace function internal.webhook_new_secret() returns text
language sql volatile set search_path = ''
as $$
  select 'whsec_' || encode(sha256(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid())
    || uuid_send(gen_random_uuid())), 'base64')
$$;

create or replace function internal.webhook_endpoint_facts(e internal.webhook_endpoints) returns jsonb
language sql immutable set search_path = ''
as $$
  select jsonb_build_object('id', e.id, 'workspace_id', e.workspace_id, 'url', e.url,
    'description', e.description, 'event_types', to_jsonb(e.event_types), 'enabled', e.enabled,
    'disabled_reason', e.disabled_reason, 'consecutive_failures', e.consecutive_failures,
    'failing_since', e.failing_since, 'created_at', e.created_at, 'updated_at', e.updated_at)
$$;

-- Checks the event types asked for: known platform events or dotted application event names.
create or replace function internal.webhook_check_event_types(types text[]) returns text[]
language plpgsql immutable set search_path = ''
as $$
declare
  t text;
begin
  if types is null or cardinality(types) = 0 then
    raise exception 'Choose at least one event type' using errcode = '22023';
  end if;
  foreach t in array types loop
    if t is null or not (t = any (internal.webhook_event_types())
        or (t ~ '^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$' and split_part(t, '.', 1) not in
          ('project', 'member', 'invitation', 'billing', 'webhook'))) then
      raise exception 'Unknown event type: %', coalesce(t, 'null') using errcode = '22023';
    end if;
  end loop;
  return array(select distinct unnest(types) order by 1);
end
$$;

-- The endpoint a caller manages (owner or admin of its workspace), locked; PT404 otherwise.
create or replace function internal.webhook_endpoint_for_admin(endpoint_id uuid) returns internal.webhook_endpoints
language plpgsql volatile set search_path = ''
as $$
declare
  found_row internal.webhook_endpoints;
begin
  perform internal.require_user();
  select * into found_row from internal.webhook_endpoints e where e.id = endpoint_id for update;
  if not found or coalesce(tenantry.role(found_row.workspace_id) < 'admin', true) then
    raise exception 'Webhook endpoint not found' using errcode = 'PT404';
  end if;
  return found_row;
end
$$;

-- Queues one event for every enabled endpoint of the workspace that subscribed to its type.
create or replace function internal.webhook_enqueue(workspace_id uuid, event_type text, data jsonb,
  only_endpoint uuid default null) returns integer
language plpgsql volatile security definer set search_path = ''
as $$
declare
  queued integer;
begin
  insert into internal.webhook_messages (endpoint_id, workspace_id, event_type, payload)
  select e.id, e.workspace_id, webhook_enqueue.event_type,
    jsonb_build_object('type', webhook_enqueue.event_type,
      'timestamp', to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
      'data', coalesce(webhook_enqueue.data, '{}'::jsonb))
  from internal.webhook_endpoints e
  where e.workspace_id = webhook_enqueue.workspace_id
    and (only_endpoint is null and e.enabled and webhook_enqueue.event_type = any (e.event_types)
         or e.id = only_endpoint);
  get diagnostics queued = row_count;
  return queued;
end
$$;

-- The platform hook: an application table's trigger calls this to send its own events, in the
-- transaction of its change. Names are dotted and outside the platform's namespaces (e.g.
-- 'invoice.paid'); the caller must be in the workspace (or be the service or a database job).
create or replace function tenantry.emit_webhook(workspace_id uuid, event_type text, payload jsonb default '{}')
returns integer
language plpgsql volatile security definer set search_path = ''
as $$
begin
  if auth.uid() is not null and tenantry.role(emit_webhook.workspace_id) is null then
    raise exception 'Workspace not found' using errcode = 'PT404';
  end if;
  if event_type is null or event_type !~ '^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$'
      or split_part(event_type, '.', 1) in ('project', 'member', 'invitation', 'billing', 'webhook') then
    raise exception 'An application event type is a dotted lowercase name outside the platform''s events (got %)',
      coalesce(event_type, 'null') using errcode = '22023';
  end if;
  if pg_column_size(payload) > 65536 then
    raise exception 'A webhook payload is limited to 64 KiB' using errcode = '22023';
  end if;
  return internal.webhook_enqueue(emit_webhook.workspace_id, emit_webhook.event_type, payload);
end
$$;

-- Platform events, written by triggers in the transaction of the change.
create or replace function internal.webhook_projects() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform internal.webhook_enqueue(new.workspace_id, 'project.created', to_jsonb(new));
  elsif tg_op = 'UPDATE' then
    perform internal.webhook_enqueue(new.workspace_id, 'project.updated', to_jsonb(new));
  else
    perform internal.webhook_enqueue(old.workspace_id, 'project.deleted', to_jsonb(old));
  end if;
  return null;
end
$$;
drop trigger if exists projects_webhooks on public.projects;
create trigger projects_webhooks after insert or update or delete on public.projects
  for each row execute function internal.webhook_projects();

create or replace function internal.webhook_members() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform internal.webhook_enqueue(new.workspace_id, 'member.added',
      jsonb_build_object('workspace_id', new.workspace_id, 'user_id', new.user_id, 'role', new.role));
  elsif tg_op = 'UPDATE' then
    if new.role is distinct from old.role then
      perform internal.webhook_enqueue(new.workspace_id, 'member.role_changed',
        jsonb_build_object('workspace_id', new.workspace_id, 'user_id', new.user_id, 'from', old.role, 'to', new.role));
    end if;
  else
    perform internal.webhook_enqueue(old.workspace_id, 'member.removed',
      jsonb_build_object('workspace_id', old.workspace_id, 'user_id', old.user_id, 'role', old.role));
  end if;
  return null;
end
$$;
drop trigger if exists workspace_members_webhooks on public.workspace_members;
create trigger workspace_members_webhooks after insert or update or delete on public.workspace_members
  for each row execute function internal.webhook_members();

-- The invitation's token is not in this table; e-mail and role are what the admins already see.
create or replace function internal.webhook_invitations() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  facts jsonb := jsonb_build_object('id', new.id, 'workspace_id', new.workspace_id, 'email', new.email,
    'role', new.role, 'expires_at', new.expires_at);
begin
  if tg_op = 'INSERT' then
    perform internal.webhook_enqueue(new.workspace_id, 'invitation.created', facts);
  elsif new.revoked_at is not null and old.revoked_at is null then
    perform internal.webhook_enqueue(new.workspace_id, 'invitation.revoked', facts);
  elsif new.accepted_at is not null and old.accepted_at is null then
    perform internal.webhook_enqueue(new.workspace_id, 'invitation.accepted',
      facts || jsonb_build_object('accepted_by', new.accepted_by));
  end if;
  return null;
end
$$;
drop trigger if exists invitations_webhooks on public.invitations;
create trigger invitations_webhooks after insert or update on public.invitations
  for each row execute function internal.webhook_invitations();

create or replace function internal.webhook_subscriptions() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if (to_jsonb(new) - 'updated_at') is distinct from (to_jsonb(old) - 'updated_at') then
    perform internal.webhook_enqueue(new.workspace_id, 'billing.subscription_updated',
      jsonb_build_object('workspace_id', new.workspace_id, 'plan', new.plan, 'status', new.status,
        'cancel_at_period_end', new.cancel_at_period_end));
  end if;
  return null;
end
$$;
drop trigger if exists subscriptions_webhooks on public.subscriptions;
create trigger subscriptions_webhooks after update on public.subscriptions
  for each row execute function internal.webhook_subscriptions();

-- Registers an endpoint; the signing secret is in the answer ('secret') and is never shown again.
create or replace function public.create_webhook_endpoint(workspace_id uuid, url text, event_types text[],
  description text default '') returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  created internal.webhook_endpoints;
begin
  if coalesce(tenantry.role(create_webhook_endpoint.workspace_id) < 'admin', true) then
    raise exception 'Workspace not found' using errcode = 'PT404';
  end if;
  perform internal.webhook_check_url(btrim(coalesce(url, '')));
  if (select count(*) from internal.webhook_endpoints e where e.workspace_id = create_webhook_endpoint.workspace_id) >= 20 then
    raise exception 'A workspace can have at most 20 webhook endpoints' using errcode = '23514';
  end if;
  insert into internal.webhook_endpoints (workspace_id, url, description, event_types, secret, created_by)
  values (create_webhook_endpoint.workspace_id, btrim(url), btrim(coalesce(description, '')),
    internal.webhook_check_event_types(event_types), internal.webhook_new_secret(), uid)
  returning * into created;
  perform internal.audit_record('webhook_endpoint.created', created.workspace_id, null, 'webhook_endpoint',
    created.id::text, jsonb_build_object('url', created.url, 'event_types', to_jsonb(created.event_types)));
  return internal.webhook_endpoint_facts(created) || jsonb_build_object('secret', created.secret);
end
$$;

-- Changes what is given (null leaves a field as it is). Enabling clears an automatic disabling.
create or replace function public.update_webhook_endpoint(endpoint_id uuid, url text default null,
  event_types text[] default null, description text default null, enabled boolean default null) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  target internal.webhook_endpoints := internal.webhook_endpoint_for_admin(endpoint_id);
  changed internal.webhook_endpoints;
begin
  if url is not null then
    perform internal.webhook_check_url(btrim(url));
  end if;
  update internal.webhook_endpoints e set
    url = coalesce(btrim(update_webhook_endpoint.url), e.url),
    event_types = case when update_webhook_endpoint.event_types is null then e.event_types
      else internal.webhook_check_event_types(update_webhook_endpoint.event_types) end,
    description = coalesce(btrim(update_webhook_endpoint.description), e.description),
    enabled = coalesce(update_webhook_endpoint.enabled, e.enabled),
    disabled_reason = case when update_webhook_endpoint.enabled then null else e.disabled_reason end,
    consecutive_failures = case when update_webhook_endpoint.enabled then 0 else e.consecutive_failures end,
    failing_since = case when update_webhook_endpoint.enabled then null else e.failing_since end,
    updated_at = now()
  where e.id = target.id
  returning * into changed;
  perform internal.audit_record('webhook_endpoint.updated', changed.workspace_id, null, 'webhook_endpoint',
    changed.id::text, jsonb_build_object('url', changed.url, 'event_types', to_jsonb(changed.event_types),
      'enabled', changed.enabled));
  return internal.webhook_endpoint_facts(changed);
end
$$;

create or replace function public.rotate_webhook_secret(endpoint_id uuid) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  target internal.webhook_endpoints := internal.webhook_endpoint_for_admin(endpoint_id);
  changed internal.webhook_endpoints;
begin
  update internal.webhook_endpoints e set secret = internal.webhook_new_secret(), updated_at = now()
  where e.id = target.id returning * into changed;
  perform internal.audit_record('webhook_endpoint.secret_rotated', changed.workspace_id, null,
    'webhook_endpoint', changed.id::text, jsonb_build_object('url', changed.url));
  return internal.webhook_endpoint_facts(changed) || jsonb_build_object('secret', changed.secret);
end
$$;

create or replace function public.delete_webhook_endpoint(endpoint_id uuid) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  target internal.webhook_endpoints := internal.webhook_endpoint_for_admin(endpoint_id);
begin
  delete from internal.webhook_endpoints e where e.id = target.id;
  perform internal.audit_record('webhook_endpoint.deleted', target.workspace_id, null, 'webhook_endpoint',
    target.id::text, jsonb_build_object('url', target.url));
  return internal.webhook_endpoint_facts(target);
end
$$;

create or replace function public.list_webhook_endpoints(workspace_id uuid) returns setof jsonb
language plpgsql stable security definer set search_path = ''
as $$
begin
  perform internal.require_user();
  if coalesce(tenantry.role(list_webhook_endpoints.workspace_id) < 'admin', true) then
    raise exception 'Workspace not found' using errcode = 'PT404';
  end if;
  return query select internal.webhook_endpoint_facts(e) from internal.webhook_endpoints e
    where e.workspace_id = list_webhook_endpoints.workspace_id order by e.created_at;
end
$$;

-- An endpoint's newest deliveries with their attempts (newest first), for its log.
create or replace function public.list_webhook_deliveries(endpoint_id uuid, max_rows integer default 50)
returns setof jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  target internal.webhook_endpoints := internal.webhook_endpoint_for_admin(endpoint_id);
begin
  return query
    select jsonb_build_object('id', m.id, 'webhook_id', m.webhook_id, 'event_type', m.event_type,
      'payload', m.payload, 'status', m.status, 'attempts', m.attempts, 'created_at', m.created_at,
      'next_attempt_at', case when m.status = 'pending' then m.available_at end,
      'delivered_at', m.delivered_at,
      'log', coalesce((select jsonb_agg(jsonb_build_object('attempted_at', a.attempted_at,
          'status_code', a.status_code, 'duration_ms', a.duration_ms, 'error', a.error,
          'response_excerpt', a.response_excerpt, 'manual', a.manual) order by a.id desc)
        from internal.webhook_attempts a where a.message_id = m.id), '[]'::jsonb))
    from internal.webhook_messages m where m.endpoint_id = target.id
    order by m.id desc limit least(greatest(coalesce(max_rows, 50), 1), 200);
end
$$;

-- Sends one delivery again now, with the same webhook-id (a new attempt in its log).
create or replace function public.replay_webhook_delivery(delivery_id bigint) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  message internal.webhook_messages;
begin
  select * into message from internal.webhook_messages m where m.id = delivery_id;
  if not found then
    raise exception 'Delivery not found' using errcode = 'PT404';
  end if;
  perform internal.webhook_endpoint_for_admin(message.endpoint_id);
  update internal.webhook_messages m set status = 'pending', available_at = now(), leased_until = null,
    delivered_at = null, manual = true
  where m.id = message.id;
  return jsonb_build_object('id', message.id, 'webhook_id', message.webhook_id, 'status', 'pending');
end
$$;

-- Queues a 'webhook.test' event for one endpoint (enabled or not).
create or replace function public.send_test_webhook(endpoint_id uuid) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  target internal.webhook_endpoints := internal.webhook_endpoint_for_admin(endpoint_id);
begin
  perform internal.webhook_enqueue(target.workspace_id, 'webhook.test',
    jsonb_build_object('endpoint_id', target.id, 'message', 'This is a test event from your workspace.'),
    target.id);
  return jsonb_build_object('queued', true);
end
$$;

-- Called by the deliverer (service role) when an endpoint is turned off for repeated failure: the
-- audit line is written as the system's act.
create or replace function internal.webhook_auto_disable(endpoint_id uuid, reason text) returns boolean
language plpgsql volatile security definer set search_path = ''
as $$
declare
  changed internal.webhook_endpoints;
begin
  update internal.webhook_endpoints e set enabled = false, disabled_reason = reason, updated_at = now()
  where e.id = endpoint_id and e.enabled returning * into changed;
  if not found then
    return false;
  end if;
  perform internal.audit_record('webhook_endpoint.disabled', changed.workspace_id, null, 'webhook_endpoint',
    changed.id::text, jsonb_build_object('url', changed.url, 'reason', reason,
      'consecutive_failures', changed.consecutive_failures));
  return true;
end
$$;

do $$
declare
  f text;
begin
  foreach f in array array[
    'internal.webhook_event_types()', 'internal.webhook_check_url(text)', 'internal.webhook_address_refused(inet)',
    'internal.webhook_new_secret()', 'internal.webhook_endpoint_facts(internal.webhook_endpoints)',
    'internal.webhook_check_event_types(text[])', 'internal.webhook_endpoint_for_admin(uuid)',
    'internal.webhook_enqueue(uuid, text, jsonb, uuid)', 'tenantry.emit_webhook(uuid, text, jsonb)',
    'internal.webhook_projects()', 'internal.webhook_members()', 'internal.webhook_invitations()',
    'internal.webhook_subscriptions()', 'public.create_webhook_endpoint(uuid, text, text[], text)',
    'public.update_webhook_endpoint(uuid, text, text[], text, boolean)', 'public.rotate_webhook_secret(uuid)',
    'public.delete_webhook_endpoint(uuid)', 'public.list_webhook_endpoints(uuid)',
    'public.list_webhook_deliveries(uuid, integer)', 'public.replay_webhook_delivery(bigint)',
    'public.send_test_webhook(uuid)', 'internal.webhook_auto_disable(uuid, text)'] loop
    execute format('alter function %s owner to service_role', f);
    execute format('revoke all on function %s from public', f);
  end loop;
  foreach f in array array['public.create_webhook_endpoint(uuid, text, text[], text)',
    'public.update_webhook_endpoint(uuid, text, text[], text, boolean)', 'public.rotate_webhook_secret(uuid)',
    'public.delete_webhook_endpoint(uuid)', 'public.list_webhook_endpoints(uuid)',
    'public.list_webhook_deliveries(uuid, integer)', 'public.replay_webhook_delivery(bigint)',
    'public.send_test_webhook(uuid)', 'tenantry.emit_webhook(uuid, text, jsonb)'] loop
    execute format('grant execute on function %s to authenticated, service_role', f);
  end loop;
  foreach f in array array['internal.webhook_auto_disable(uuid, text)', 'internal.webhook_check_url(text)',
    'internal.webhook_address_refused(inet)', 'internal.webhook_check_event_types(text[])',
    'internal.webhook_endpoint_facts(internal.webhook_endpoints)', 'internal.webhook_event_types()',
    'internal.webhook_new_secret()', 'internal.webhook_endpoint_for_admin(uuid)',
    'internal.webhook_enqueue(uuid, text, jsonb, uuid)'] loop
    execute format('grant execute on function %s to service_role', f);
  end loop;
end
$$;

comment on table internal.webhook_endpoints is 'Outgoing webhook endpoints of a workspace (decision 0094); the secret is the service''s only.';
comment on table internal.webhook_messages is 'Outgoing webhook outbox: one row per event and endpoint, written with the change.';
comment on table internal.webhook_attempts is 'Delivery log of outgoing webhooks: one row per HTTP attempt.';
