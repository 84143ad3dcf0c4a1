-- The tenancy model: workspaces, members and roles, invitations, profiles, notification
-- preferences, the activity log, billing state and the example domain table (projects).
-- Every rule lives here, in policies, triggers and SECURITY DEFINER functions, so it holds for
-- direct data-API writes and server actions alike. See docs/data-model.md.
--
-- Error codes raised (PostgREST maps them to HTTP statuses):
--   42501 permission denied          -> 403 (401 for anonymous callers)
--   22023 invalid parameter value    -> 400
--   23505 unique violation           -> 409
--   P0001 business rule (last owner) -> 400
--   PT404 / PT409 / PT410            -> 404 not found / 409 already used / 410 expired or revoked

-- Roles are ordered: comparisons (>=) read as "at least".
create type public.workspace_role as enum ('viewer', 'member', 'admin', 'owner');

create table public.workspaces (
  id uuid primary key default gen_random_uuid(),
  name text not null check (char_length(btrim(name)) between 1 and 100),
  slug text not null unique check (slug ~ '^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$'),
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create table public.workspace_members (
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  role public.workspace_role not null,
  created_at timestamptz not null default now(),
  primary key (workspace_id, user_id)
);
-- The membership lookup every policy makes: "which workspaces is this user in, at what role".
create index workspace_members_user_idx on public.workspace_members (user_id, workspace_id) include (role);

create table public.invitations (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  email text not null check (email = lower(btrim(email)) and email ~ '^[^@\s]+@[^@\s]+$'),
  role public.workspace_role not null,
  invited_by uuid references auth.users (id) on delete set null,
  expires_at timestamptz not null,
  accepted_at timestamptz,
  accepted_by uuid references auth.users (id) on delete set null,
  revoked_at timestamptz,
  declined_at timestamptz,
  created_at timestamptz not null default now()
);
-- One open invitation per e-mail and workspace (expired ones are closed before a new one).
create unique index invitations_one_open_idx on public.invitations (workspace_id, email)
  where accepted_at is null and revoked_at is null and declined_at is null;
create index invitations_email_idx on public.invitations (email);

-- Invitation tokens are secrets: only their SHA-256 is kept, in a table no client can read.
create table internal.invitation_tokens (
  invitation_id uuid primary key references public.invitations (id) on delete cascade,
  token_hash bytea not null unique
);

create table public.profiles (
  id uuid primary key references auth.users (id) on delete cascade,
  email text not null,
  display_name text check (display_name is null or char_length(display_name) <= 100),
  avatar_url text check (avatar_url is null or (avatar_url ~ '^https?://' and char_length(avatar_url) <= 2048)),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

-- Members also reference their profile, so clients can embed it: select=*,profiles(display_name).
alter table public.workspace_members add constraint workspace_members_profile_fkey
  foreign key (user_id) references public.profiles (id) on delete cascade;

create table public.notification_preferences (
  user_id uuid primary key references auth.users (id) on delete cascade,
  digest_frequency text not null default 'weekly' check (digest_frequency in ('off', 'daily', 'weekly')),
  muted_workspace_ids uuid[] not null default '{}',
  updated_at timestamptz not null default now()
);

create table public.activity_events (
  id bigint generated always as identity primary key,
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  actor_id uuid references auth.users (id) on delete set null,
  action text not null,
  subject text,
  data jsonb not null default '{}',
  created_at timestamptz not null default now()
);
create index activity_events_workspace_idx on public.activity_events (workspace_id, created_at desc);

create table public.subscriptions (
  workspace_id uuid primary key references public.workspaces (id) on delete cascade,
  plan text not null default 'free',
  status text not null default 'active',
  stripe_customer_id text unique,
  stripe_subscription_id text unique,
  stripe_price_id text,
  current_period_end timestamptz,
  cancel_at_period_end boolean not null default false,
  past_due_since timestamptz,
  -- provider time (unix seconds) of the newest event applied: older events never overwrite it
  last_event_created bigint,
  updated_at timestamptz not null default now()
);

create table public.projects (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  name text not null check (char_length(btrim(name)) between 1 and 200),
  description text check (description is null or char_length(description) <= 5000),
  created_by uuid references auth.users (id) on delete set null default auth.uid(),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index projects_workspace_idx on public.projects (workspace_id, created_at desc);

-- ---------------------------------------------------------------------------------------------
-- Membership helpers. SECURITY DEFINER (owned by service_role, which bypasses RLS) so policies
-- can consult memberships without recursing into the members table's own policy.
-- ---------------------------------------------------------------------------------------------
grant usage on schema internal to authenticated, service_role;

-- The caller's workspaces (at a minimum role) as an array. Policies compare with
-- `= any ((select …)::uuid[])`, which Postgres evaluates once per statement (an InitPlan) and
-- turns into an index condition on (workspace_id, …) indexes, so an RLS-filtered list costs what
-- the same query with an explicit workspace filter costs.
create function internal.my_workspace_id_array(min_role public.workspace_role default 'viewer')
returns uuid[]
language sql stable security definer set search_path = ''
as $$
  select coalesce(array_agg(m.workspace_id), '{}') from public.workspace_members m
  where m.user_id = auth.uid() and m.role >= min_role
$$;

create function internal.my_role(ws uuid) returns public.workspace_role
language sql stable security definer set search_path = ''
as $$
  select m.role from public.workspace_members m where m.workspace_id = ws and m.user_id = auth.uid()
$$;

-- Everyone who shares at least one workspace with the caller (to show names in member lists).
create function internal.my_coworker_ids() returns setof uuid
language sql stable security definer set search_path = ''
as $$
  select distinct m.user_id from public.workspace_members m
  where m.workspace_id = any ((select internal.my_workspace_id_array())::uuid[])
$$;

-- The caller's e-mail from the user record, not from token claims that may be stale.
create function internal.my_email() returns text
language sql stable security definer set search_path = ''
as $$
  select u.email from auth.users u where u.id = auth.uid()
$$;

-- True when the current request acts for an end user (policies and rules apply); false for the
-- service role and for server-internal work without claims.
create function internal.acting_as_user() returns boolean
language sql stable set search_path = ''
as $$
  select coalesce(auth.role(), '') in ('authenticated', 'anon')
$$;

-- ---------------------------------------------------------------------------------------------
-- Row-level security: enabled and forced on every exposed table.
-- ---------------------------------------------------------------------------------------------
alter table public.workspaces enable row level security;
alter table public.workspaces force row level security;
alter table public.workspace_members enable row level security;
alter table public.workspace_members force row level security;
alter table public.invitations enable row level security;
alter table public.invitations force row level security;
alter table public.profiles enable row level security;
alter table public.profiles force row level security;
alter table public.notification_preferences enable row level security;
alter table public.notification_preferences force row level security;
alter table public.activity_events enable row level security;
alter table public.activity_events force row level security;
alter table public.subscriptions enable row level security;
alter table public.subscriptions force row level security;
alter table public.projects enable row level security;
alter table public.projects force row level security;

create policy workspaces_read on public.workspaces for select to authenticated
  using (id = any ((select internal.my_workspace_id_array())::uuid[]));
create policy workspaces_edit on public.workspaces for update to authenticated
  using (id = any ((select internal.my_workspace_id_array('admin'))::uuid[]))
  with check (id = any ((select internal.my_workspace_id_array('admin'))::uuid[]));
create policy workspaces_delete on public.workspaces for delete to authenticated
  using (id = any ((select internal.my_workspace_id_array('owner'))::uuid[]));

create policy members_read on public.workspace_members for select to authenticated
  using (workspace_id = any ((select internal.my_workspace_id_array())::uuid[]));
-- Who may change which role is decided by the members trigger below; this only scopes rows.
create policy members_edit on public.workspace_members for update to authenticated
  using (workspace_id = any ((select internal.my_workspace_id_array('admin'))::uuid[]))
  with check (workspace_id = any ((select internal.my_workspace_id_array('admin'))::uuid[]));
create policy members_delete on public.workspace_members for delete to authenticated
  using (user_id = (select auth.uid()) or workspace_id = any ((select internal.my_workspace_id_array('admin'))::uuid[]));

create policy invitations_read on public.invitations for select to authenticated
  using (workspace_id = any ((select internal.my_workspace_id_array('admin'))::uuid[]) or email = (select internal.my_email()));

create policy profiles_read on public.profiles for select to authenticated
  using (id = (select auth.uid()) or id in (select internal.my_coworker_ids()));
create policy profiles_edit on public.profiles for update to authenticated
  using (id = (select auth.uid())) with check (id = (select auth.uid()));

create policy preferences_read on public.notification_preferences for select to authenticated
  using (user_id = (select auth.uid()));
create policy preferences_edit on public.notification_preferences for update to authenticated
  using (user_id = (select auth.uid())) with check (user_id = (select auth.uid()));

create policy activity_read on public.activity_events for select to authenticated
  using (workspace_id = any ((select internal.my_workspace_id_array())::uuid[]));

create policy subscriptions_read on public.subscriptions for select to authenticated
  using (workspace_id = any ((select internal.my_workspace_id_array())::uuid[]));

create policy projects_read on public.projects for select to authenticated
  using (workspace_id = any ((select internal.my_workspace_id_array())::uuid[]));
create policy projects_insert on public.projects for insert to authenticated
  with check (workspace_id = any ((select internal.my_workspace_id_array('member'))::uuid[]));
create policy projects_edit on public.projects for update to authenticated
  using (workspace_id = any ((select internal.my_workspace_id_array('member'))::uuid[]))
  with check (workspace_id = any ((select internal.my_workspace_id_array('member'))::uuid[]));
create policy projects_delete on public.projects for delete to authenticated
  using (workspace_id = any ((select internal.my_workspace_id_array('member'))::uuid[]));

-- Grants: reads of every table, writes only of the columns a client may set. anon gets nothing.
grant select on public.workspaces, public.workspace_members, public.invitations, public.profiles,
  public.notification_preferences, public.activity_events, public.subscriptions, public.projects
  to authenticated;
grant update (name, slug) on public.workspaces to authenticated;
grant delete on public.workspaces to authenticated;
grant update (role) on public.workspace_members to authenticated;
grant delete on public.workspace_members to authenticated;
grant update (display_name, avatar_url) on public.profiles to authenticated;
grant update (digest_frequency, muted_workspace_ids) on public.notification_preferences to authenticated;
-- id is insertable so clients can upsert with ids they generate; moving a project needs member
-- rights in both workspaces (the update policy checks the old and the new row).
grant insert (id, workspace_id, name, description), update (workspace_id, name, description), delete
  on public.projects to authenticated;
grant all on all tables in schema public to service_role;
grant select, insert, update, delete on internal.invitation_tokens to service_role;

-- ---------------------------------------------------------------------------------------------
-- Triggers: timestamps, sign-up rows, member rules, activity log.
-- ---------------------------------------------------------------------------------------------
create function internal.touch_updated_at() returns trigger
language plpgsql set search_path = ''
as $$
begin
  new.updated_at := now();
  return new;
end
$$;
create trigger workspaces_touch before update on public.workspaces
  for each row execute function internal.touch_updated_at();
create trigger profiles_touch before update on public.profiles
  for each row execute function internal.touch_updated_at();
create trigger preferences_touch before update on public.notification_preferences
  for each row execute function internal.touch_updated_at();
create trigger projects_touch before update on public.projects
  for each row execute function internal.touch_updated_at();

-- Every new user gets a profile and default notification preferences, in the sign-up transaction.
create function internal.on_user_created() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  insert into public.profiles (id, email, display_name)
  values (new.id, coalesce(new.email, ''),
          nullif(left(coalesce(new.raw_user_meta_data ->> 'display_name', new.raw_user_meta_data ->> 'full_name', ''), 100), ''));
  insert into public.notification_preferences (user_id) values (new.id);
  return new;
end
$$;
create trigger users_create_profile after insert on auth.users
  for each row execute function internal.on_user_created();

-- The profile's e-mail mirrors the account's; clients cannot set it.
create function internal.on_user_email_changed() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  update public.profiles set email = coalesce(new.email, '') where id = new.id;
  return new;
end
$$;
create trigger users_sync_profile_email after update of email on auth.users
  for each row when (old.email is distinct from new.email)
  execute function internal.on_user_email_changed();

-- Projects record who created them, whatever the client sends.
create function internal.stamp_project_creator() returns trigger
language plpgsql set search_path = ''
as $$
begin
  if internal.acting_as_user() then
    new.created_by := auth.uid();
  end if;
  return new;
end
$$;
create trigger projects_stamp_creator before insert on public.projects
  for each row execute function internal.stamp_project_creator();

-- Role rules for every change of membership made on behalf of a user: nobody grants a role above
-- their own, only owners touch owners, and a workspace always keeps an owner.
create function internal.guard_membership() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  ws uuid := coalesce(new.workspace_id, old.workspace_id);
  caller public.workspace_role;
  other_owners integer;
begin
  -- Deleting the workspace (or the user) cascades here: nothing left to protect.
  if tg_op = 'DELETE' and (
       not exists (select 1 from public.workspaces w where w.id = old.workspace_id)
       or not exists (select 1 from auth.users u where u.id = old.user_id)) then
    return old;
  end if;

  -- Serialise membership changes per workspace so two owners cannot demote each other at once.
  perform 1 from public.workspaces w where w.id = ws for update;

  if internal.acting_as_user() then
    caller := internal.my_role(ws);
    if caller is null then
      raise exception 'You are not a member of this workspace' using errcode = '42501';
    end if;
    if tg_op = 'UPDATE' then
      if new.user_id <> old.user_id or new.workspace_id <> old.workspace_id then
        raise exception 'Membership rows cannot be moved' using errcode = '42501';
      end if;
      if new.role > caller then
        raise exception 'You cannot grant a role above your own' using errcode = '42501';
      end if;
      if old.user_id = auth.uid() then
        if new.role > old.role then
          raise exception 'You cannot raise your own role' using errcode = '42501';
        end if;
      elsif caller < 'admin' then
        raise exception 'Only admins and owners can change roles' using errcode = '42501';
      elsif old.role = 'owner' and caller <> 'owner' then
        raise exception 'Only owners can change an owner''s role' using errcode = '42501';
      end if;
    elsif tg_op = 'DELETE' and old.user_id <> auth.uid() then
      if caller < 'admin' then
        raise exception 'Only admins and owners can remove members' using errcode = '42501';
      elsif old.role = 'owner' and caller <> 'owner' then
        raise exception 'Only owners can remove an owner' using errcode = '42501';
      end if;
    end if;
  end if;

  if old.role = 'owner' and (tg_op = 'DELETE' or new.role <> 'owner') then
    select count(*) into other_owners from public.workspace_members m
    where m.workspace_id = ws and m.role = 'owner' and m.user_id <> old.user_id;
    if other_owners = 0 then
      raise exception 'A workspace must keep at least one owner: make someone else owner first'
        using errcode = 'P0001';
    end if;
  end if;

  if tg_op = 'DELETE' then
    return old;
  end if;
  return new;
end
$$;
create trigger members_guard before update or delete on public.workspace_members
  for each row execute function internal.guard_membership();

-- The activity log: one event per change, written by triggers in the same transaction.
create function internal.log_activity(ws uuid, action text, subject text, data jsonb) returns void
language sql security definer set search_path = ''
as $$
  insert into public.activity_events (workspace_id, actor_id, action, subject, data)
  values (ws, auth.uid(), action, subject, coalesce(data, '{}'::jsonb))
$$;

create function internal.on_workspace_changed() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform internal.log_activity(new.id, 'workspace.created', new.name, jsonb_build_object('slug', new.slug));
  elsif new.name is distinct from old.name or new.slug is distinct from old.slug then
    perform internal.log_activity(new.id, 'workspace.updated', new.name,
      jsonb_build_object('old_name', old.name, 'name', new.name, 'old_slug', old.slug, 'slug', new.slug));
  end if;
  return null;
end
$$;
create trigger workspaces_activity after insert or update on public.workspaces
  for each row execute function internal.on_workspace_changed();

create function internal.on_member_changed() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  who text;
begin
  select p.email into who from public.profiles p where p.id = coalesce(new.user_id, old.user_id);
  if tg_op = 'INSERT' then
    perform internal.log_activity(new.workspace_id, 'member.added', who,
      jsonb_build_object('user_id', new.user_id, 'role', new.role));
  elsif tg_op = 'UPDATE' then
    if new.role <> old.role then
      perform internal.log_activity(new.workspace_id, 'member.role_changed', who,
        jsonb_build_object('user_id', new.user_id, 'old_role', old.role, 'role', new.role));
    end if;
  elsif exists (select 1 from public.workspaces w where w.id = old.workspace_id) then
    perform internal.log_activity(old.workspace_id,
      case when old.user_id = auth.uid() then 'member.left' else 'member.removed' end, who,
      jsonb_build_object('user_id', old.user_id, 'role', old.role));
  end if;
  return null;
end
$$;
create trigger members_activity after insert or update or delete on public.workspace_members
  for each row execute function internal.on_member_changed();

create function internal.on_invitation_changed() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform internal.log_activity(new.workspace_id, 'invitation.created', new.email,
      jsonb_build_object('invitation_id', new.id, 'role', new.role));
  elsif new.accepted_at is not null and old.accepted_at is null then
    perform internal.log_activity(new.workspace_id, 'invitation.accepted', new.email,
      jsonb_build_object('invitation_id', new.id, 'role', new.role));
  elsif new.revoked_at is not null and old.revoked_at is null then
    perform internal.log_activity(new.workspace_id, 'invitation.revoked', new.email,
      jsonb_build_object('invitation_id', new.id));
  elsif new.declined_at is not null and old.declined_at is null then
    perform internal.log_activity(new.workspace_id, 'invitation.declined', new.email,
      jsonb_build_object('invitation_id', new.id));
  elsif new.expires_at <> old.expires_at then
    perform internal.log_activity(new.workspace_id, 'invitation.resent', new.email,
      jsonb_build_object('invitation_id', new.id));
  end if;
  return null;
end
$$;
create trigger invitations_activity after insert or update on public.invitations
  for each row execute function internal.on_invitation_changed();

create function internal.on_project_changed() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op = 'INSERT' then
    perform internal.log_activity(new.workspace_id, 'project.created', new.name, jsonb_build_object('project_id', new.id));
  elsif tg_op = 'UPDATE' then
    perform internal.log_activity(new.workspace_id, 'project.updated', new.name, jsonb_build_object('project_id', new.id));
  elsif exists (select 1 from public.workspaces w where w.id = old.workspace_id) then
    perform internal.log_activity(old.workspace_id, 'project.deleted', old.name, jsonb_build_object('project_id', old.id));
  end if;
  return null;
end
$$;
create trigger projects_activity after insert or update or delete on public.projects
  for each row execute function internal.on_project_changed();

-- ---------------------------------------------------------------------------------------------
-- Operations, callable at /rest/v1/rpc/<name> and from server actions.
-- ---------------------------------------------------------------------------------------------
create function internal.require_user() returns uuid
language plpgsql stable set search_path = ''
as $$
declare
  uid uuid := auth.uid();
begin
  if uid is null then
    raise exception 'Sign in first' using errcode = '42501';
  end if;
  return uid;
end
$$;

-- The caller's role in a workspace; a workspace the caller is not in is reported as not found,
-- so membership of other tenants is never revealed.
create function internal.require_role(ws uuid, min_role public.workspace_role) returns public.workspace_role
language plpgsql stable security definer set search_path = ''
as $$
declare
  caller public.workspace_role := internal.my_role(ws);
begin
  if caller is null then
    raise exception 'Workspace not found' using errcode = 'PT404';
  end if;
  if caller < min_role then
    raise exception 'This needs the % role or higher in this workspace', min_role using errcode = '42501';
  end if;
  return caller;
end
$$;

create function internal.parse_role(role text) returns public.workspace_role
language plpgsql immutable set search_path = ''
as $$
begin
  if role is null or role not in ('viewer', 'member', 'admin', 'owner') then
    raise exception 'Unknown role %: use viewer, member, admin or owner', coalesce(role, 'null')
      using errcode = '22023';
  end if;
  return role::public.workspace_role;
end
$$;

create function internal.new_token() returns text
language sql volatile set search_path = ''
as $$
  -- two version-4 UUIDs: 244 random bits from the server's CSPRNG
  select replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')
$$;

create function internal.token_hash(token text) returns bytea
language sql immutable set search_path = ''
as $$
  select sha256(convert_to(token, 'UTF8'))
$$;

-- Invitation e-mails go through the outbox in the same transaction as the invitation, whoever
-- invites (server action or a direct RPC call). The raw token exists only in that e-mail and in
-- the function's return value.
--
-- The service's public base URL, for links in e-mails written by the database. Kept in step with
-- APP_URL at start-up (src/server/settings.ts).
create table internal.app_settings (
  id boolean primary key default true check (id),
  app_url text not null default 'http://localhost:3000'
);
insert into internal.app_settings default values;
grant select on internal.app_settings to service_role;

create function internal.enqueue_invitation_mail(invitation public.invitations, token text) returns void
language plpgsql security definer set search_path = ''
as $$
declare
  workspace_name text;
  inviter text;
  link text;
begin
  select w.name into workspace_name from public.workspaces w where w.id = invitation.workspace_id;
  select coalesce(p.display_name, p.email) into inviter from public.profiles p where p.id = auth.uid();
  select s.app_url || '/invitations/accept?token=' || token into link from internal.app_settings s;
  insert into internal.outbox (kind, to_address, subject, text_body, headers, message_id)
  values (
    'invitation',
    invitation.email,
    coalesce(inviter, 'Someone') || ' invited you to ' || workspace_name,
    concat_ws(E'\n',
      coalesce(inviter, 'Someone') || ' invited you to join the workspace "' || workspace_name || '" as ' || invitation.role || '.',
      '',
      'Accept the invitation: ' || link,
      '',
      'The link works once, for ' || invitation.email || ', until ' || to_char(invitation.expires_at at time zone 'UTC', 'YYYY-MM-DD HH24:MI') || ' UTC.',
      'If you did not expect this, ignore this e-mail.'),
    '{}'::jsonb,
    '<' || gen_random_uuid() || '@tenantry.invitation>'
  );
end
$$;
grant insert on internal.outbox to service_role;
grant usage on sequence internal.outbox_id_seq to service_role;

create function public.create_workspace(name text, slug text default null)
returns public.workspaces
language plpgsql security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  clean_name text := btrim(coalesce(name, ''));
  base text;
  candidate text;
  created public.workspaces;
  attempt integer := 0;
begin
  if char_length(clean_name) not between 1 and 100 then
    raise exception 'Workspace name must be 1 to 100 characters' using errcode = '22023';
  end if;
  if slug is not null then
    if slug !~ '^[a-z0-9](?:[a-z0-9-]{0,46}[a-z0-9])?$' then
      raise exception 'Slug must be 1 to 48 lowercase letters, digits or dashes, not starting or ending with a dash'
        using errcode = '22023';
    end if;
    if exists (select 1 from public.workspaces w where w.slug = create_workspace.slug) then
      raise exception 'The slug "%" is taken', slug using errcode = '23505';
    end if;
    candidate := slug;
  else
    base := btrim(left(regexp_replace(lower(clean_name), '[^a-z0-9]+', '-', 'g'), 40), '-');
    if base = '' then
      base := 'workspace';
    end if;
    candidate := base;
    while exists (select 1 from public.workspaces w where w.slug = candidate) loop
      attempt := attempt + 1;
      candidate := base || '-' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 6);
      if attempt > 20 then
        raise exception 'Could not find a free slug; pass one explicitly' using errcode = '23505';
      end if;
    end loop;
  end if;

  insert into public.workspaces (name, slug, created_by) values (clean_name, candidate, uid)
    returning * into created;
  insert into public.workspace_members (workspace_id, user_id, role) values (created.id, uid, 'owner');
  insert into public.subscriptions (workspace_id) values (created.id);
  return created;
end
$$;

create function public.invite_member(workspace_id uuid, email text, role text default 'member')
returns json
language plpgsql security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  caller public.workspace_role := internal.require_role(invite_member.workspace_id, 'admin');
  wanted public.workspace_role := internal.parse_role(role);
  address text := lower(btrim(coalesce(email, '')));
  token text := internal.new_token();
  invitation public.invitations;
begin
  if address !~ '^[^@\s]+@[^@\s]+\.[^@\s]+$' or char_length(address) > 320 then
    raise exception 'Not a valid e-mail address: %', email using errcode = '22023';
  end if;
  if wanted > caller then
    raise exception 'You cannot grant a role above your own' using errcode = '42501';
  end if;
  if exists (select 1 from public.workspace_members m join auth.users u on u.id = m.user_id
             where m.workspace_id = invite_member.workspace_id and u.email = address) then
    raise exception '% is already a member of this workspace', address using errcode = '23505';
  end if;
  -- An expired invitation no longer blocks a new one.
  update public.invitations i set revoked_at = now()
  where i.workspace_id = invite_member.workspace_id and i.email = address and i.expires_at <= now()
    and i.accepted_at is null and i.revoked_at is null and i.declined_at is null;
  begin
    insert into public.invitations (workspace_id, email, role, invited_by, expires_at)
    values (invite_member.workspace_id, address, wanted, uid, now() + interval '7 days')
    returning * into invitation;
  exception when unique_violation then
    raise exception 'An invitation for % is already pending; resend or revoke it', address using errcode = '23505';
  end;
  insert into internal.invitation_tokens (invitation_id, token_hash) values (invitation.id, internal.token_hash(token));
  perform internal.enqueue_invitation_mail(invitation, token);
  return json_build_object('invitation_id', invitation.id, 'token', token, 'email', address,
    'role', invitation.role, 'expires_at', invitation.expires_at);
end
$$;

-- Finds an invitation by its raw token and checks it is addressed to the caller and still open.
create function internal.open_invitation_for_caller(token text) returns public.invitations
language plpgsql security definer set search_path = ''
as $$
declare
  invitation public.invitations;
begin
  select i.* into invitation from internal.invitation_tokens t join public.invitations i on i.id = t.invitation_id
  where t.token_hash = internal.token_hash(coalesce(token, ''))
  for update of i;
  if invitation.id is null then
    raise exception 'Invitation not found' using errcode = 'PT404';
  end if;
  if invitation.email <> coalesce(internal.my_email(), '') then
    raise exception 'This invitation was sent to a different e-mail address' using errcode = '42501';
  end if;
  if invitation.accepted_at is not null then
    raise exception 'This invitation has already been used' using errcode = 'PT409';
  end if;
  if invitation.revoked_at is not null then
    raise exception 'This invitation was revoked' using errcode = 'PT410';
  end if;
  if invitation.declined_at is not null then
    raise exception 'This invitation was declined' using errcode = 'PT410';
  end if;
  if invitation.expires_at <= now() then
    raise exception 'This invitation has expired; ask for a new one' using errcode = 'PT410';
  end if;
  return invitation;
end
$$;

create function public.accept_invitation(token text)
returns json
language plpgsql security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  invitation public.invitations := internal.open_invitation_for_caller(token);
begin
  if exists (select 1 from public.workspace_members m where m.workspace_id = invitation.workspace_id and m.user_id = uid) then
    raise exception 'You are already a member of this workspace' using errcode = 'PT409';
  end if;
  update public.invitations set accepted_at = now(), accepted_by = uid where id = invitation.id;
  insert into public.workspace_members (workspace_id, user_id, role) values (invitation.workspace_id, uid, invitation.role);
  return json_build_object('workspace_id', invitation.workspace_id, 'role', invitation.role);
end
$$;

create function public.decline_invitation(token text)
returns void
language plpgsql security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  invitation public.invitations := internal.open_invitation_for_caller(token);
begin
  perform uid;
  update public.invitations set declined_at = now() where id = invitation.id;
end
$$;

-- Loads an open invitation for an admin of its workspace.
create function internal.invitation_for_admin(invitation_id uuid) returns public.invitations
language plpgsql security definer set search_path = ''
as $$
declare
  invitation public.invitations;
begin
  select i.* into invitation from public.invitations i where i.id = invitation_id for update;
  if invitation.id is null or internal.my_role(invitation.workspace_id) is null then
    raise exception 'Invitation not found' using errcode = 'PT404';
  end if;
  perform internal.require_role(invitation.workspace_id, 'admin');
  if invitation.accepted_at is not null or invitation.revoked_at is not null or invitation.declined_at is not null then
    raise exception 'This invitation is no longer pending' using errcode = 'PT409';
  end if;
  return invitation;
end
$$;

create function public.revoke_invitation(invitation_id uuid)
returns void
language plpgsql security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  invitation public.invitations := internal.invitation_for_admin(invitation_id);
begin
  perform uid;
  update public.invitations set revoked_at = now() where id = invitation.id;
end
$$;

-- A new token (the old link stops working) and a fresh 7-day expiry.
create function public.resend_invitation(invitation_id uuid)
returns json
language plpgsql security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  invitation public.invitations := internal.invitation_for_admin(invitation_id);
  token text := internal.new_token();
begin
  perform uid;
  if invitation.role > internal.my_role(invitation.workspace_id) then
    raise exception 'You cannot grant a role above your own' using errcode = '42501';
  end if;
  update public.invitations set expires_at = now() + interval '7 days' where id = invitation.id
    returning * into invitation;
  update internal.invitation_tokens set token_hash = internal.token_hash(token) where invitation_tokens.invitation_id = invitation.id;
  perform internal.enqueue_invitation_mail(invitation, token);
  return json_build_object('invitation_id', invitation.id, 'token', token, 'email', invitation.email,
    'role', invitation.role, 'expires_at', invitation.expires_at);
end
$$;

create function public.update_member_role(workspace_id uuid, user_id uuid, role text)
returns void
language plpgsql security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  caller public.workspace_role := internal.require_role(update_member_role.workspace_id, 'viewer');
  wanted public.workspace_role := internal.parse_role(role);
begin
  perform uid, caller;
  update public.workspace_members m set role = wanted
  where m.workspace_id = update_member_role.workspace_id and m.user_id = update_member_role.user_id;
  if not found then
    raise exception 'Member not found' using errcode = 'PT404';
  end if;
end
$$;

create function public.remove_member(workspace_id uuid, user_id uuid)
returns void
language plpgsql security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  caller public.workspace_role := internal.require_role(remove_member.workspace_id, 'viewer');
begin
  perform uid, caller;
  delete from public.workspace_members m
  where m.workspace_id = remove_member.workspace_id and m.user_id = remove_member.user_id;
  if not found then
    raise exception 'Member not found' using errcode = 'PT404';
  end if;
end
$$;

create function public.leave_workspace(workspace_id uuid)
returns void
language plpgsql security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
begin
  perform internal.require_role(leave_workspace.workspace_id, 'viewer');
  delete from public.workspace_members m where m.workspace_id = leave_workspace.workspace_id and m.user_id = uid;
end
$$;

create function public.delete_workspace(workspace_id uuid)
returns void
language plpgsql security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
begin
  perform uid;
  perform internal.require_role(delete_workspace.workspace_id, 'owner');
  delete from public.workspaces w where w.id = delete_workspace.workspace_id;
end
$$;

-- Definer functions run as service_role: it bypasses RLS but holds only the grants above,
-- which is less than the superuser that may be running this migration.
do $$
declare
  fn regprocedure;
begin
  for fn in
    select p.oid::regprocedure from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where p.prosecdef and n.nspname in ('public', 'internal')
  loop
    execute format('alter function %s owner to service_role', fn);
  end loop;
end
$$;
grant select on auth.users to service_role;
grant usage on schema auth to service_role;

revoke execute on all functions in schema public from public;
revoke execute on all functions in schema internal from public;
grant execute on function public.create_workspace(text, text), public.invite_member(uuid, text, text),
  public.accept_invitation(text), public.decline_invitation(text), public.revoke_invitation(uuid),
  public.resend_invitation(uuid), public.update_member_role(uuid, uuid, text),
  public.remove_member(uuid, uuid), public.leave_workspace(uuid), public.delete_workspace(uuid)
  to authenticated, service_role;
grant execute on all functions in schema internal to service_role;
-- Only what policies and user-side triggers evaluate as the caller.
grant execute on function internal.my_workspace_id_array(public.workspace_role), internal.my_role(uuid),
  internal.my_coworker_ids(), internal.my_email(), internal.acting_as_user(), internal.touch_updated_at(),
  internal.stamp_project_creator() to authenticated;
