-- Domain auto-join (decision 0095): a workspace claims an e-mail domain (acme.com), proves it
-- controls it, and lets people whose confirmed address is on that domain join by themselves (at a
-- role the workspace chose, never above member) or ask to join (an owner or admin approves).
--
-- Proof is either an owner of the workspace with a confirmed address on the domain (checked again
-- whenever an owner leaves, is demoted or changes address) or a DNS TXT record
-- `tenantry-verification=<token>` at `_tenantry.<domain>` or the domain itself, which the service
-- looks up (it cannot be done from SQL) and reports through internal.record_domain_dns_check;
-- integrations on the data API ask for a lookup with request_domain_check.
-- A domain is verified by at most one workspace at a time (a unique index says so), and a DNS
-- proof outranks an owner's address: a workspace may claim a domain another holds by an owner's
-- address, and its TXT record, once found, takes the domain over (the holder's admins are told);
-- when a verified claim is lost or removed, an owner-address claim elsewhere takes it back.
--
-- Both tables live in `internal`, out of the data API: clients reach them only through the
-- functions below, which check the caller's role and address in the database, so a page, a script
-- and the data API are held to the same rules.

-- Domains nobody may claim: shared mail services (anyone can have an address there) and public
-- suffixes under which unrelated people register names. Kept as rows so an operator can add one.
create table internal.unclaimable_domains (
  domain text primary key check (domain = lower(domain)),
  reason text not null check (reason in ('shared_mail', 'public_suffix'))
);
insert into internal.unclaimable_domains (domain, reason)
select d, 'shared_mail' from unnest(array[
  'gmail.com', 'googlemail.com', 'outlook.com', 'hotmail.com', 'hotmail.co.uk', 'hotmail.fr',
  'live.com', 'live.co.uk', 'msn.com', 'yahoo.com', 'yahoo.co.uk', 'yahoo.fr', 'yahoo.de',
  'yahoo.co.jp', 'ymail.com', 'rocketmail.com', 'aol.com', 'icloud.com', 'me.com', 'mac.com',
  'proton.me', 'protonmail.com', 'protonmail.ch', 'pm.me', 'gmx.com', 'gmx.de', 'gmx.net',
  'web.de', 'mail.com', 'email.com', 'yandex.com', 'yandex.ru', 'ya.ru', 'mail.ru', 'bk.ru',
  'inbox.ru', 'list.ru', 'rambler.ru', 'zoho.com', 'zohomail.com', 'qq.com', '163.com', '126.com',
  'sina.com', 'naver.com', 'daum.net', 'fastmail.com', 'fastmail.fm', 'tutanota.com', 'tuta.io',
  'hey.com', 'orange.fr', 'free.fr', 'laposte.net', 'libero.it', 'virgilio.it', 't-online.de',
  'btinternet.com', 'comcast.net', 'verizon.net', 'att.net', 'rediffmail.com', 'seznam.cz',
  'wp.pl', 'o2.pl', 'interia.pl', 'mailinator.com', 'duck.com', 'skiff.com', 'hushmail.com'
]) d
union all
select d, 'public_suffix' from unnest(array[
  'co.uk', 'org.uk', 'ac.uk', 'gov.uk', 'me.uk', 'ltd.uk', 'plc.uk', 'com.au', 'net.au', 'org.au',
  'edu.au', 'gov.au', 'co.nz', 'org.nz', 'co.jp', 'ne.jp', 'or.jp', 'ac.jp', 'com.br', 'net.br',
  'org.br', 'co.in', 'net.in', 'org.in', 'co.za', 'org.za', 'com.cn', 'net.cn', 'org.cn', 'com.mx',
  'com.ar', 'com.tr', 'com.sg', 'com.hk', 'com.tw', 'co.kr', 'or.kr', 'co.il', 'com.pl', 'com.ua',
  'github.io', 'gitlab.io', 'herokuapp.com', 'vercel.app', 'netlify.app', 'pages.dev',
  'workers.dev', 'web.app', 'firebaseapp.com', 'appspot.com', 'blogspot.com', 'azurewebsites.net',
  'cloudfront.net', 'amazonaws.com', 'fly.dev', 'onrender.com', 'glitch.me', 'ngrok.io', 'ngrok.app'
]) d
on conflict do nothing;
revoke all on internal.unclaimable_domains from public, anon, authenticated, service_role;
grant select on internal.unclaimable_domains to service_role;

create table internal.workspace_domains (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  -- lower-case ASCII (an IDN arrives as punycode), no trailing dot, at least two labels
  domain text not null check (char_length(domain) <= 253
    and domain ~ '^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+([a-z]([a-z0-9-]{0,61}[a-z0-9])?)$'),
  -- the value of the TXT record that proves control: tenantry-verification=<token>
  token text not null check (token ~ '^[0-9a-f]{32}$'),
  verified_at timestamptz,
  verified_by text check (verified_by in ('owner_email', 'dns')),
  last_checked_at timestamptz,
  -- a DNS check asked for through the API (request_domain_check), not yet claimed by an instance
  check_requested_at timestamptz,
  -- what a person whose confirmed address is on the domain may do: nothing, join, or ask to join
  policy text not null default 'off' check (policy in ('off', 'auto_join', 'request')),
  -- the role they get; never admin or owner (decision 0095)
  join_role public.workspace_role not null default 'member' check (join_role in ('viewer', 'member')),
  created_by uuid references auth.users (id) on delete set null,
  created_at timestamptz not null default now(),
  unique (workspace_id, domain),
  check ((verified_at is null) = (verified_by is null))
);
-- One workspace at a time holds a domain as verified.
create unique index workspace_domains_verified_once on internal.workspace_domains (domain)
  where verified_at is not null;
create index workspace_domains_created_by_idx on internal.workspace_domains (created_by);
-- The periodic DNS check takes the longest unchecked first.
create index workspace_domains_dns_check_idx on internal.workspace_domains (last_checked_at nulls first)
  where verified_by is distinct from 'owner_email';
create index workspace_domains_check_requested_idx on internal.workspace_domains (check_requested_at)
  where check_requested_at is not null;
revoke all on internal.workspace_domains from public, anon, authenticated, service_role;
grant select, insert, update, delete on internal.workspace_domains to service_role;

create table internal.workspace_join_requests (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  user_id uuid not null references auth.users (id) on delete cascade,
  -- the domain the requester's address was on when they asked
  domain text not null,
  status text not null default 'pending' check (status in ('pending', 'approved', 'denied', 'cancelled')),
  created_at timestamptz not null default now(),
  decided_at timestamptz,
  decided_by uuid references auth.users (id) on delete set null,
  check ((status = 'pending') = (decided_at is null))
);
create unique index workspace_join_requests_one_pending on internal.workspace_join_requests (workspace_id, user_id)
  where status = 'pending';
create index workspace_join_requests_workspace_idx on internal.workspace_join_requests (workspace_id, created_at desc);
create index workspace_join_requests_user_idx on internal.workspace_join_requests (user_id, created_at desc);
create index workspace_join_requests_decided_by_idx on internal.workspace_join_requests (decided_by);
revoke all on internal.workspace_join_requests from public, anon, authenticated, service_role;
grant select, insert, update on internal.workspace_join_requests to service_role;

comment on table internal.workspace_domains is
  'E-mail domains workspaces claimed for auto-join and how each was verified (decision 0095)';
comment on table internal.workspace_join_requests is
  'Requests to join a workspace from people whose confirmed address is on one of its domains';

-- The domain part of an address, lower-cased (after the last @).
create function internal.email_domain(email text) returns text
language sql immutable set search_path = ''
as $$
  select lower(rtrim(substring(email_domain.email from '@([^@]*)$'), '.'))
$$;

-- The caller's confirmed address's domain; null while unconfirmed (unconfirmed never counts).
create function internal.my_email_domain() returns text
language sql stable security definer set search_path = ''
as $$
  select internal.email_domain(u.email) from auth.users u
  where u.id = auth.uid() and u.email_confirmed_at is not null and u.deleted_at is null
$$;

-- Whether an owner of the workspace has a confirmed address on the domain.
create function internal.owner_has_domain(workspace_id uuid, domain text) returns boolean
language sql stable security definer set search_path = ''
as $$
  select exists (
    select 1 from public.workspace_members m join auth.users u on u.id = m.user_id
    where m.workspace_id = owner_has_domain.workspace_id and m.role = 'owner'
      and u.email_confirmed_at is not null and u.deleted_at is null
      and internal.email_domain(u.email) = owner_has_domain.domain)
$$;

-- A domain as the caller typed it, made canonical, or refused with a sentence saying why.
create function internal.canonical_domain(domain text) returns text
language plpgsql immutable set search_path = ''
as $$
declare
  d text := lower(btrim(coalesce(canonical_domain.domain, '')));
begin
  d := rtrim(regexp_replace(d, '^@', ''), '.');
  if d = '' then
    raise exception 'Enter a domain, e.g. acme.com' using errcode = '22023';
  end if;
  if d ~ '[^\x01-\x7f]' then
    raise exception 'Write the domain in its ASCII form (punycode, xn--…)' using errcode = '22023';
  end if;
  if char_length(d) > 253
     or d !~ '^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+([a-z]([a-z0-9-]{0,61}[a-z0-9])?)$' then
    raise exception '"%" is not a domain name', left(d, 100) using errcode = '22023';
  end if;
  return d;
end
$$;

create function internal.workspace_domain_facts(d internal.workspace_domains) returns jsonb
language sql stable set search_path = ''
as $$
  select jsonb_build_object('id', d.id, 'workspace_id', d.workspace_id, 'domain', d.domain,
    'verified', d.verified_at is not null, 'verified_at', d.verified_at, 'verified_by', d.verified_by,
    'last_checked_at', d.last_checked_at, 'policy', d.policy, 'join_role', d.join_role,
    'dns_record_name', '_tenantry.' || d.domain,
    'dns_record_value', 'tenantry-verification=' || d.token, 'created_at', d.created_at)
$$;

-- Marks a domain verified (or not) and writes the audit line; the one place either happens.
create function internal.set_domain_verification(domain_id uuid, method text, details jsonb default '{}')
returns internal.workspace_domains
language plpgsql volatile security definer set search_path = ''
as $$
declare
  d internal.workspace_domains;
begin
  if method is null then
    update internal.workspace_domains w set verified_at = null, verified_by = null
    where w.id = set_domain_verification.domain_id and w.verified_at is not null returning * into d;
    if found then
      perform internal.audit_record('domain.unverified', d.workspace_id, null, 'domain', d.domain,
        coalesce(details, '{}'));
    end if;
  else
    update internal.workspace_domains w set verified_at = now(), verified_by = method
    where w.id = set_domain_verification.domain_id and w.verified_at is null returning * into d;
    if found then
      perform internal.audit_record('domain.verified', d.workspace_id, null, 'domain', d.domain,
        jsonb_build_object('method', method) || coalesce(details, '{}'));
    end if;
  end if;
  select * into d from internal.workspace_domains w where w.id = set_domain_verification.domain_id;
  return d;
end
$$;

-- Owner-address proofs, checked again for a workspace: a domain verified by an owner's address
-- that no owner has any more loses its verification; an unverified domain an owner now has (and
-- no other workspace holds) gains it.
create function internal.recheck_owner_domains(workspace_id uuid) returns void
language plpgsql volatile security definer set search_path = ''
as $$
declare
  d internal.workspace_domains;
begin
  for d in select * from internal.workspace_domains w where w.workspace_id = recheck_owner_domains.workspace_id
    for update loop
    if d.verified_by = 'owner_email' and not internal.owner_has_domain(d.workspace_id, d.domain) then
      perform internal.set_domain_verification(d.id, null, jsonb_build_object('reason', 'no_owner_address'));
    elsif d.verified_at is null and internal.owner_has_domain(d.workspace_id, d.domain)
      and not exists (select 1 from internal.workspace_domains o where o.domain = d.domain and o.verified_at is not null) then
      perform internal.set_domain_verification(d.id, 'owner_email');
    end if;
  end loop;
end
$$;

create function internal.on_owner_changed_for_domains() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op in ('UPDATE', 'DELETE') and old.role = 'owner' then
    perform internal.recheck_owner_domains(old.workspace_id);
  end if;
  if tg_op in ('INSERT', 'UPDATE') and new.role = 'owner' then
    perform internal.recheck_owner_domains(new.workspace_id);
  end if;
  return null;
end
$$;
create trigger members_recheck_domains after insert or update of role or delete on public.workspace_members
  for each row execute function internal.on_owner_changed_for_domains();

create function internal.on_user_address_changed_for_domains() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  ws uuid;
begin
  for ws in select m.workspace_id from public.workspace_members m
    where m.user_id = new.id and m.role = 'owner'
      and exists (select 1 from internal.workspace_domains d where d.workspace_id = m.workspace_id) loop
    perform internal.recheck_owner_domains(ws);
  end loop;
  return null;
end
$$;
create trigger users_recheck_domains after update of email, email_confirmed_at, deleted_at on auth.users
  for each row when (old.email is distinct from new.email
    or old.email_confirmed_at is distinct from new.email_confirmed_at
    or old.deleted_at is distinct from new.deleted_at)
  execute function internal.on_user_address_changed_for_domains();

-- Claims a domain for the workspace (owners and admins): verified at once when an owner's
-- confirmed address is on it and nobody holds it; otherwise the answer carries the TXT record to
-- publish, and whether another workspace holds the domain now (by an owner's address: the
-- record, once found, takes it over).
create function public.add_workspace_domain(workspace_id uuid, domain text) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  clean text := internal.canonical_domain(add_workspace_domain.domain);
  refusal text;
  created internal.workspace_domains;
begin
  if coalesce(tenantry.role(add_workspace_domain.workspace_id) < 'admin', true) then
    raise exception 'Workspace not found' using errcode = 'PT404';
  end if;
  -- the domain itself or any domain it sits under (mail.gmail.com is gmail's, not yours)
  select u.reason into refusal from internal.unclaimable_domains u
  where clean = u.domain or clean like '%.' || u.domain limit 1;
  if refusal = 'shared_mail' then
    raise exception '% is a shared mail service: anyone can have an address there', clean using errcode = '22023';
  elsif refusal is not null then
    raise exception '% is shared by unrelated owners and cannot be claimed', clean using errcode = '22023';
  end if;
  if exists (select 1 from internal.workspace_domains w
             where w.workspace_id = add_workspace_domain.workspace_id and w.domain = clean) then
    raise exception 'This workspace has already added %', clean using errcode = '23505';
  end if;
  if exists (select 1 from internal.workspace_domains w where w.domain = clean and w.verified_by = 'dns') then
    raise exception '% is verified by another workspace', clean using errcode = '23505';
  end if;
  if (select count(*) from internal.workspace_domains w where w.workspace_id = add_workspace_domain.workspace_id) >= 20 then
    raise exception 'A workspace can add at most 20 domains' using errcode = '23514';
  end if;
  insert into internal.workspace_domains (workspace_id, domain, token, created_by)
  values (add_workspace_domain.workspace_id, clean, replace(gen_random_uuid()::text, '-', ''), uid)
  returning * into created;
  perform internal.audit_record('domain.added', created.workspace_id, null, 'domain', created.domain, '{}');
  if internal.owner_has_domain(created.workspace_id, created.domain)
     and not exists (select 1 from internal.workspace_domains o
                     where o.domain = created.domain and o.verified_at is not null) then
    created := internal.set_domain_verification(created.id, 'owner_email');
  end if;
  return internal.workspace_domain_facts(created) || jsonb_build_object('held_elsewhere',
    created.verified_at is null and exists (select 1 from internal.workspace_domains o
      where o.domain = created.domain and o.verified_at is not null));
end
$$;

-- The workspace's domains with their proof and policy (owners and admins).
create function public.list_workspace_domains(workspace_id uuid) returns setof jsonb
language plpgsql stable security definer set search_path = ''
as $$
begin
  perform internal.require_user();
  if coalesce(tenantry.role(list_workspace_domains.workspace_id) < 'admin', true) then
    raise exception 'Workspace not found' using errcode = 'PT404';
  end if;
  return query
    select internal.workspace_domain_facts(d) || jsonb_build_object('held_elsewhere',
      d.verified_at is null and exists (select 1 from internal.workspace_domains o
                                        where o.domain = d.domain and o.verified_at is not null))
    from internal.workspace_domains d
    where d.workspace_id = list_workspace_domains.workspace_id
    order by d.domain;
end
$$;

-- A domain of a workspace the caller administers, locked for a change; else not found.
create function internal.domain_for_admin(domain_id uuid) returns internal.workspace_domains
language plpgsql volatile security definer set search_path = ''
as $$
declare
  d internal.workspace_domains;
begin
  perform internal.require_user();
  select * into d from internal.workspace_domains w where w.id = domain_for_admin.domain_id for update;
  if d.id is null or coalesce(tenantry.role(d.workspace_id) < 'admin', true) then
    raise exception 'Domain not found' using errcode = 'PT404';
  end if;
  return d;
end
$$;

-- What people on the domain may do: 'off', 'auto_join' or 'request', and at which role.
create function public.set_workspace_domain_policy(domain_id uuid, policy text, join_role text default 'member')
returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  d internal.workspace_domains := internal.domain_for_admin(set_workspace_domain_policy.domain_id);
  wanted_role public.workspace_role;
begin
  if set_workspace_domain_policy.policy is null or set_workspace_domain_policy.policy not in ('off', 'auto_join', 'request') then
    raise exception 'The policy is off, auto_join or request' using errcode = '22023';
  end if;
  if set_workspace_domain_policy.join_role is null or set_workspace_domain_policy.join_role not in ('viewer', 'member') then
    raise exception 'People joining by domain become viewers or members, never admins or owners'
      using errcode = '22023';
  end if;
  wanted_role := set_workspace_domain_policy.join_role::public.workspace_role;
  if set_workspace_domain_policy.policy <> 'off' and d.verified_at is null then
    raise exception 'Verify % before letting people join by it', d.domain using errcode = '22023';
  end if;
  if d.policy is distinct from set_workspace_domain_policy.policy or d.join_role is distinct from wanted_role then
    update internal.workspace_domains w set policy = set_workspace_domain_policy.policy, join_role = wanted_role
    where w.id = d.id;
    perform internal.audit_record('domain.policy_changed', d.workspace_id, null, 'domain', d.domain,
      jsonb_build_object('from', jsonb_build_object('policy', d.policy, 'join_role', d.join_role),
        'to', jsonb_build_object('policy', set_workspace_domain_policy.policy, 'join_role', wanted_role)));
    select * into d from internal.workspace_domains w where w.id = d.id;
  end if;
  return internal.workspace_domain_facts(d);
end
$$;

-- Removes a claim; pending requests made through it stay for the admins to answer or deny. A
-- verified one leaves its domain to the other workspaces' owner-address claims.
create function public.remove_workspace_domain(domain_id uuid) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  d internal.workspace_domains := internal.domain_for_admin(remove_workspace_domain.domain_id);
begin
  delete from internal.workspace_domains w where w.id = d.id;
  perform internal.audit_record('domain.removed', d.workspace_id, null, 'domain', d.domain,
    jsonb_build_object('was_verified', d.verified_at is not null));
  if d.verified_at is not null then
    perform internal.offer_domain_to_owner_claims(d.domain);
  end if;
  return internal.workspace_domain_facts(d);
end
$$;

-- The service's report of a DNS lookup for one claim: found verifies it (taking the domain over
-- from an owner-address proof elsewhere), gone removes a DNS verification (and lets an
-- owner-address claim elsewhere take the domain back), unknown (null) changes nothing.
create function internal.record_domain_dns_check(domain_id uuid, record_found boolean, requested_by uuid default null)
returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  d internal.workspace_domains;
  holder internal.workspace_domains;
begin
  update internal.workspace_domains w set last_checked_at = now()
  where w.id = record_domain_dns_check.domain_id returning * into d;
  if d.id is null then
    raise exception 'Domain not found' using errcode = 'PT404';
  end if;
  select * into holder from internal.workspace_domains o
  where o.domain = d.domain and o.verified_at is not null and o.id <> d.id
  for update;
  if record_found and d.verified_at is null then
    if holder.id is null then
      d := internal.set_domain_verification(d.id, 'dns',
        jsonb_strip_nulls(jsonb_build_object('requested_by', requested_by)));
    elsif holder.verified_by = 'owner_email' then
      holder := internal.set_domain_verification(holder.id, null,
        jsonb_build_object('reason', 'dns_proof_elsewhere'));
      perform internal.enqueue_domain_taken_over_mails(holder);
      d := internal.set_domain_verification(d.id, 'dns',
        jsonb_strip_nulls(jsonb_build_object('requested_by', requested_by, 'replaced', 'owner_email')));
    end if;
  elsif record_found is false and d.verified_by = 'dns' then
    d := internal.set_domain_verification(d.id, null, jsonb_build_object('reason', 'dns_record_gone'));
    perform internal.offer_domain_to_owner_claims(d.domain);
  end if;
  return internal.workspace_domain_facts(d) || jsonb_build_object('held_elsewhere',
    d.verified_at is null and exists (select 1 from internal.workspace_domains o
      where o.domain = d.domain and o.verified_at is not null and o.id <> d.id));
end
$$;

-- The caller's qualifying domain claims: verified, open (auto-join or request) and on the domain
-- of the caller's confirmed address, exactly (sub.acme.com does not qualify for acme.com).
create function internal.open_domain_for_caller(workspace_id uuid) returns internal.workspace_domains
language sql stable security definer set search_path = ''
as $$
  select d.* from internal.workspace_domains d
  where d.workspace_id = open_domain_for_caller.workspace_id and d.verified_at is not null
    and d.policy <> 'off' and d.domain = internal.my_email_domain()
$$;

-- Workspaces the caller may join or ask to join, with the state of their latest request there.
create function public.joinable_workspaces() returns setof jsonb
language plpgsql stable security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  mine text := internal.my_email_domain();
begin
  return query
    select jsonb_build_object('workspace_id', w.id, 'name', w.name, 'slug', w.slug, 'logo_path', w.logo_path,
      'domain', d.domain, 'policy', d.policy, 'join_role', d.join_role,
      'members', (select count(*) from public.workspace_members m where m.workspace_id = w.id),
      'request', (select jsonb_build_object('id', r.id, 'status', r.status, 'created_at', r.created_at,
                    'decided_at', r.decided_at)
                  from internal.workspace_join_requests r
                  where r.workspace_id = w.id and r.user_id = uid
                  order by r.created_at desc limit 1))
    from internal.workspace_domains d join public.workspaces w on w.id = d.workspace_id
    where mine is not null and d.domain = mine and d.verified_at is not null and d.policy <> 'off'
      and not exists (select 1 from public.workspace_members m where m.workspace_id = w.id and m.user_id = uid)
    order by w.name, w.id;
end
$$;

-- Joins at once where the workspace lets the caller's domain auto-join.
create function public.join_workspace_by_domain(workspace_id uuid) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  d internal.workspace_domains := internal.open_domain_for_caller(join_workspace_by_domain.workspace_id);
  ws public.workspaces;
begin
  if d.id is null then
    raise exception 'You cannot join this workspace with your address' using errcode = '42501';
  end if;
  if d.policy <> 'auto_join' then
    raise exception 'This workspace approves each person: ask to join instead' using errcode = '42501';
  end if;
  if exists (select 1 from public.workspace_members m where m.workspace_id = d.workspace_id and m.user_id = uid) then
    raise exception 'You are already a member of this workspace' using errcode = 'PT409';
  end if;
  -- the seat limit of the plan is enforced by the members trigger (internal.enforce_seats)
  insert into public.workspace_members (workspace_id, user_id, role) values (d.workspace_id, uid, d.join_role);
  perform internal.audit_record('domain.auto_joined', d.workspace_id, uid, 'domain', d.domain,
    jsonb_build_object('role', d.join_role));
  -- an earlier request there is answered by the join itself
  update internal.workspace_join_requests r set status = 'cancelled', decided_at = now(), decided_by = uid
  where r.workspace_id = d.workspace_id and r.user_id = uid and r.status = 'pending';
  select * into ws from public.workspaces w where w.id = d.workspace_id;
  return jsonb_build_object('workspace_id', ws.id, 'slug', ws.slug, 'name', ws.name, 'role', d.join_role);
end
$$;

create function internal.join_request_facts(r internal.workspace_join_requests) returns jsonb
language sql stable set search_path = ''
as $$
  select jsonb_build_object('id', r.id, 'workspace_id', r.workspace_id, 'user_id', r.user_id,
    'domain', r.domain, 'status', r.status, 'created_at', r.created_at, 'decided_at', r.decided_at)
$$;

-- Asks to join where the workspace approves each person. One pending request per workspace, and
-- after a denial a day's wait, so a request cannot be used to flood the admins; the owners and
-- admins are e-mailed (once a day per requester).
create function public.request_to_join_workspace(workspace_id uuid) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  d internal.workspace_domains := internal.open_domain_for_caller(request_to_join_workspace.workspace_id);
  created internal.workspace_join_requests;
begin
  if d.id is null then
    raise exception 'You cannot ask to join this workspace with your address' using errcode = '42501';
  end if;
  if exists (select 1 from public.workspace_members m where m.workspace_id = d.workspace_id and m.user_id = uid) then
    raise exception 'You are already a member of this workspace' using errcode = 'PT409';
  end if;
  if d.policy <> 'request' then
    raise exception 'You can join this workspace directly' using errcode = '22023';
  end if;
  if exists (select 1 from internal.workspace_join_requests r
             where r.workspace_id = d.workspace_id and r.user_id = uid and r.status = 'pending') then
    raise exception 'You have already asked to join; an admin will answer' using errcode = 'PT409';
  end if;
  if exists (select 1 from internal.workspace_join_requests r
             where r.workspace_id = d.workspace_id and r.user_id = uid and r.status = 'denied'
               and r.decided_at > now() - interval '1 day') then
    raise exception 'Your request was denied; you can ask again tomorrow' using errcode = 'PT429';
  end if;
  insert into internal.workspace_join_requests (workspace_id, user_id, domain)
  values (d.workspace_id, uid, d.domain) returning * into created;
  perform internal.audit_record('join_request.created', d.workspace_id, uid, 'join_request', created.id::text,
    jsonb_build_object('domain', d.domain));
  perform internal.enqueue_join_request_mails(created);
  return internal.join_request_facts(created);
end
$$;

-- Withdraws the caller's own pending request.
create function public.cancel_join_request(request_id uuid) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  r internal.workspace_join_requests;
begin
  update internal.workspace_join_requests q set status = 'cancelled', decided_at = now(), decided_by = uid
  where q.id = cancel_join_request.request_id and q.user_id = uid and q.status = 'pending'
  returning * into r;
  if r.id is null then
    raise exception 'Request not found' using errcode = 'PT404';
  end if;
  perform internal.audit_record('join_request.cancelled', r.workspace_id, uid, 'join_request', r.id::text, '{}');
  return internal.join_request_facts(r);
end
$$;

-- The workspace's pending requests, oldest first, with who asked (owners and admins).
create function public.list_join_requests(workspace_id uuid) returns setof jsonb
language plpgsql stable security definer set search_path = ''
as $$
begin
  perform internal.require_user();
  if coalesce(tenantry.role(list_join_requests.workspace_id) < 'admin', true) then
    raise exception 'Workspace not found' using errcode = 'PT404';
  end if;
  return query
    select internal.join_request_facts(r) || jsonb_build_object('email', u.email,
      'display_name', p.display_name,
      'role', (select d.join_role from internal.workspace_domains d
               where d.workspace_id = r.workspace_id and d.domain = r.domain))
    from internal.workspace_join_requests r
    join auth.users u on u.id = r.user_id
    left join public.profiles p on p.id = r.user_id
    where r.workspace_id = list_join_requests.workspace_id and r.status = 'pending'
    order by r.created_at, r.id;
end
$$;

-- Tells the requester the answer, by e-mail through the outbox, in the same transaction; the
-- facts ride along (template.layout = 'notice') so the service renders it in the product's HTML
-- layout with a text part (src/server/mail/notice-mail.tsx), as the invitation is.
create function internal.enqueue_join_answer_mail(r internal.workspace_join_requests) returns void
language plpgsql volatile security definer set search_path = ''
as $$
declare
  ws public.workspaces;
  address text;
  link text;
  approved boolean := r.status = 'approved';
  sentence text;
begin
  select * into ws from public.workspaces w where w.id = r.workspace_id;
  select u.email into address from auth.users u where u.id = r.user_id and u.deleted_at is null;
  if address is null then
    return;
  end if;
  select s.app_url || case when approved then '/w/' || ws.slug else '/workspaces' end
    into link from internal.app_settings s;
  sentence := 'An admin of "' || ws.name || '" ' || case when approved then 'approved' else 'declined' end
    || ' your request to join.';
  insert into internal.outbox (kind, dedupe_key, to_address, subject, text_body, message_id, template)
  values (
    'join_request_answered',
    'join-request:' || r.id,
    address,
    case when approved then 'You have joined ' || ws.name
         else 'Your request to join ' || ws.name || ' was declined' end,
    concat_ws(E'\n', sentence, '',
      case when approved then 'Open the workspace: ' else 'Your workspaces: ' end || link),
    '<' || gen_random_uuid() || '@tenantry.join-request>',
    jsonb_build_object(
      'layout', 'notice',
      'heading', case when approved then 'Welcome to ' || ws.name else 'Your request was declined' end,
      'paragraphs', jsonb_build_array(sentence),
      'action', jsonb_build_object(
        'label', case when approved then 'Open the workspace' else 'Your workspaces' end,
        'url', link)));
end
$$;

-- Approves (the requester becomes a member at the domain's role) or denies a pending request.
-- Approval checks again that the requester still qualifies: a confirmed address on a verified
-- domain of the workspace that is open to requests or auto-join.
create function public.answer_join_request(request_id uuid, approve boolean) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
  r internal.workspace_join_requests;
  d internal.workspace_domains;
  requester_domain text;
begin
  select * into r from internal.workspace_join_requests q where q.id = answer_join_request.request_id for update;
  if r.id is null or coalesce(tenantry.role(r.workspace_id) < 'admin', true) then
    raise exception 'Request not found' using errcode = 'PT404';
  end if;
  if r.status <> 'pending' then
    raise exception 'This request was already answered' using errcode = 'PT409';
  end if;
  if answer_join_request.approve is null then
    raise exception 'Approve or deny' using errcode = '22023';
  end if;
  if answer_join_request.approve then
    select internal.email_domain(u.email) into requester_domain from auth.users u
    where u.id = r.user_id and u.email_confirmed_at is not null and u.deleted_at is null;
    select * into d from internal.workspace_domains w
    where w.workspace_id = r.workspace_id and w.domain = requester_domain
      and w.verified_at is not null and w.policy <> 'off';
    if d.id is null then
      raise exception 'This person no longer has a confirmed address on a domain open to joining; invite them instead'
        using errcode = '22023';
    end if;
    if not exists (select 1 from public.workspace_members m where m.workspace_id = r.workspace_id and m.user_id = r.user_id) then
      insert into public.workspace_members (workspace_id, user_id, role) values (r.workspace_id, r.user_id, d.join_role);
    end if;
  end if;
  update internal.workspace_join_requests q
  set status = case when answer_join_request.approve then 'approved' else 'denied' end,
      decided_at = now(), decided_by = uid
  where q.id = r.id returning * into r;
  perform internal.audit_record(case when answer_join_request.approve then 'join_request.approved'
                                     else 'join_request.denied' end,
    r.workspace_id, r.user_id, 'join_request', r.id::text,
    jsonb_strip_nulls(jsonb_build_object('domain', r.domain, 'role', d.join_role)));
  perform internal.enqueue_join_answer_mail(r);
  return internal.join_request_facts(r);
end
$$;

-- The caller's own requests of the last 30 days, newest first (shown on their workspaces page).
create function public.my_join_requests() returns setof jsonb
language plpgsql stable security definer set search_path = ''
as $$
declare
  uid uuid := internal.require_user();
begin
  return query
    select internal.join_request_facts(r) || jsonb_build_object('name', w.name, 'slug', w.slug)
    from internal.workspace_join_requests r join public.workspaces w on w.id = r.workspace_id
    where r.user_id = uid and r.created_at > now() - interval '30 days'
    order by r.created_at desc
    limit 50;
end
$$;

-- The periodic re-check's batch: domains not proven by an owner's address, longest unchecked first.
create function internal.domains_due_for_dns_check(max_rows integer) returns table (id uuid, domain text, token text)
language sql stable security definer set search_path = ''
as $$
  select d.id, d.domain, d.token from internal.workspace_domains d
  where d.verified_by is distinct from 'owner_email'
  order by d.last_checked_at nulls first, d.id
  limit greatest(coalesce(max_rows, 0), 0)
$$;

-- The owners and admins of a workspace who can be e-mailed (an address, confirmed, account not
-- deleted): whom every notice about the workspace goes to.
create function internal.workspace_admin_recipients(workspace_id uuid) returns table (user_id uuid, email text)
language sql stable security definer set search_path = ''
as $$
  select u.id, u.email from public.workspace_members m join auth.users u on u.id = m.user_id
  where m.workspace_id = workspace_admin_recipients.workspace_id and m.role >= 'admin'
    and u.email is not null and u.email_confirmed_at is not null and u.deleted_at is null
$$;

-- Tells the workspace's owners and admins (confirmed, not deleted accounts) that `r` waits for an
-- answer. Skipped when the same person already asked this workspace within the last day.
create function internal.enqueue_join_request_mails(r internal.workspace_join_requests) returns void
language plpgsql volatile security definer set search_path = ''
as $$
declare
  ws public.workspaces;
  requester text;
  join_role text;
  link text;
  sentence text;
  admin record;
begin
  if exists (select 1 from internal.workspace_join_requests q
             where q.workspace_id = r.workspace_id and q.user_id = r.user_id and q.id <> r.id
               and q.created_at > now() - interval '1 day') then
    return;
  end if;
  select * into ws from public.workspaces w where w.id = r.workspace_id;
  select case when nullif(btrim(p.display_name), '') is null then u.email
              else btrim(p.display_name) || ' (' || u.email || ')' end
    into requester
  from auth.users u left join public.profiles p on p.id = u.id
  where u.id = r.user_id;
  select d.join_role::text into join_role from internal.workspace_domains d
  where d.workspace_id = r.workspace_id and d.domain = r.domain;
  select s.app_url || '/w/' || ws.slug || '/members' into link from internal.app_settings s;
  sentence := requester || ' asked to join "' || ws.name || '" with their address on ' || r.domain
    || coalesce('; approved, they join as ' || join_role, '') || '.';
  for admin in select a.user_id, a.email from internal.workspace_admin_recipients(r.workspace_id) a loop
    insert into internal.outbox (kind, dedupe_key, to_address, subject, text_body, message_id, template)
    values (
      'join_request_received',
      'join-request-received:' || r.id || ':' || admin.user_id,
      admin.email,
      requester || ' asked to join ' || ws.name,
      concat_ws(E'\n', sentence, '', 'Approve or deny on the members page: ' || link, '',
        'You get this as an owner or admin of ' || ws.name || '.'),
      '<' || gen_random_uuid() || '@tenantry.join-request>',
      jsonb_build_object(
        'layout', 'notice',
        'heading', 'A request to join ' || ws.name,
        'paragraphs', jsonb_build_array(sentence),
        'action', jsonb_build_object('label', 'Approve or deny', 'url', link),
        'note', 'You get this as an owner or admin of ' || ws.name || '.'));
  end loop;
end
$$;

-- Tells the owners and admins of the workspace whose claim `lost` a DNS proof elsewhere took over.
create function internal.enqueue_domain_taken_over_mails(lost internal.workspace_domains) returns void
language plpgsql volatile security definer set search_path = ''
as $$
declare
  ws public.workspaces;
  link text;
  sentence text;
  explain text := 'A DNS record proves control of a domain and outranks an owner''s address. Your members stay; '
    || 'people with an address on it no longer join by it. If the domain is yours, publish your own TXT record '
    || 'from the domain settings and check it.';
  admin record;
begin
  select * into ws from public.workspaces w where w.id = lost.workspace_id;
  select s.app_url || '/w/' || ws.slug || '/settings/domains' into link from internal.app_settings s;
  sentence := 'Another workspace proved control of ' || lost.domain || ' with a DNS record, so it is no longer '
    || 'verified for "' || ws.name || '".';
  for admin in select a.user_id, a.email from internal.workspace_admin_recipients(lost.workspace_id) a loop
    insert into internal.outbox (kind, dedupe_key, to_address, subject, text_body, message_id, template)
    values (
      'domain_taken_over',
      -- one per takeover (a domain can change hands twice within a second) and person
      'domain-taken-over:' || lost.id || ':' || admin.user_id || ':' || txid_current(),
      admin.email,
      lost.domain || ' is no longer verified for ' || ws.name,
      concat_ws(E'\n', sentence, '', explain, '', 'Domain settings: ' || link),
      '<' || gen_random_uuid() || '@tenantry.domain>',
      jsonb_build_object(
        'layout', 'notice',
        'heading', lost.domain || ' was verified elsewhere',
        'paragraphs', jsonb_build_array(sentence, explain),
        'action', jsonb_build_object('label', 'Domain settings', 'url', link),
        'note', 'You get this as an owner or admin of ' || ws.name || '.'));
  end loop;
end
$$;

-- Offers a domain nobody holds any more to the other workspaces' claims on it: the oldest whose
-- owner has a confirmed address on it is verified by that address.
create function internal.offer_domain_to_owner_claims(domain text) returns void
language plpgsql volatile security definer set search_path = ''
as $$
declare
  claim record;
begin
  for claim in
    select o.workspace_id from internal.workspace_domains o
    where o.domain = offer_domain_to_owner_claims.domain and o.verified_at is null
    order by o.created_at
  loop
    exit when exists (select 1 from internal.workspace_domains v
                      where v.domain = offer_domain_to_owner_claims.domain and v.verified_at is not null);
    perform internal.recheck_owner_domains(claim.workspace_id);
  end loop;
end
$$;

-- Owners and admins ask for a DNS check of one of their claims; one lookup per domain per 30 s.
create function public.request_domain_check(domain_id uuid) returns jsonb
language plpgsql volatile security definer set search_path = ''
as $$
declare
  d internal.workspace_domains;
begin
  perform internal.require_user();
  select * into d from internal.workspace_domains w where w.id = request_domain_check.domain_id for update;
  if d.id is null or coalesce(tenantry.role(d.workspace_id) < 'admin', true) then
    raise exception 'Domain not found' using errcode = 'PT404';
  end if;
  if d.verified_by = 'owner_email' then
    raise exception '% is verified by an owner''s address; there is no DNS record to check', d.domain
      using errcode = '22023';
  end if;
  if d.check_requested_at is null and d.last_checked_at > now() - interval '30 seconds' then
    raise exception '% was checked moments ago; ask again in 30 seconds', d.domain using errcode = 'PT429';
  end if;
  update internal.workspace_domains w set check_requested_at = coalesce(w.check_requested_at, now())
  where w.id = d.id returning * into d;
  return internal.workspace_domain_facts(d) || jsonb_build_object('check_requested_at', d.check_requested_at);
end
$$;

-- Asked checks, oldest first, claimed so that two instances do not look up the same domain.
create function internal.claim_requested_domain_checks(max_rows integer) returns table (id uuid, domain text, token text)
language sql volatile security definer set search_path = ''
as $$
  -- Marked checked now, so a new request while the lookup runs waits its 30 s like any other.
  update internal.workspace_domains d set check_requested_at = null, last_checked_at = now()
  where d.id in (select w.id from internal.workspace_domains w where w.check_requested_at is not null
                 order by w.check_requested_at limit greatest(coalesce(max_rows, 0), 0)
                 for update skip locked)
  returning d.id, d.domain, d.token
$$;

-- Definers run as service_role (decision 0089 / migration 0089).
alter function internal.my_email_domain() owner to service_role;
alter function internal.owner_has_domain(uuid, text) owner to service_role;
alter function internal.set_domain_verification(uuid, text, jsonb) owner to service_role;
alter function internal.recheck_owner_domains(uuid) owner to service_role;
alter function internal.on_owner_changed_for_domains() owner to service_role;
alter function internal.on_user_address_changed_for_domains() owner to service_role;
alter function public.add_workspace_domain(uuid, text) owner to service_role;
alter function public.list_workspace_domains(uuid) owner to service_role;
alter function internal.domain_for_admin(uuid) owner to service_role;
alter function public.set_workspace_domain_policy(uuid, text, text) owner to service_role;
alter function public.remove_workspace_domain(uuid) owner to service_role;
alter function internal.record_domain_dns_check(uuid, boolean, uuid) owner to service_role;
alter function internal.open_domain_for_caller(uuid) owner to service_role;
alter function public.joinable_workspaces() owner to service_role;
alter function public.join_workspace_by_domain(uuid) owner to service_role;
alter function public.request_to_join_workspace(uuid) owner to service_role;
alter function public.cancel_join_request(uuid) owner to service_role;
alter function public.list_join_requests(uuid) owner to service_role;
alter function internal.enqueue_join_answer_mail(internal.workspace_join_requests) owner to service_role;
alter function public.answer_join_request(uuid, boolean) owner to service_role;
alter function public.my_join_requests() owner to service_role;
alter function internal.domains_due_for_dns_check(integer) owner to service_role;
-- The definers above read what they check (auth.users for addresses; outbox to tell requesters).
grant select on auth.users to service_role;
grant insert on internal.outbox to service_role;

revoke all on function internal.email_domain(text) from public;
revoke all on function internal.my_email_domain() from public;
revoke all on function internal.owner_has_domain(uuid, text) from public;
revoke all on function internal.canonical_domain(text) from public;
revoke all on function internal.workspace_domain_facts(internal.workspace_domains) from public;
revoke all on function internal.set_domain_verification(uuid, text, jsonb) from public;
revoke all on function internal.recheck_owner_domains(uuid) from public;
revoke all on function internal.domain_for_admin(uuid) from public;
revoke all on function internal.record_domain_dns_check(uuid, boolean, uuid) from public;
revoke all on function internal.open_domain_for_caller(uuid) from public;
revoke all on function internal.join_request_facts(internal.workspace_join_requests) from public;
revoke all on function internal.enqueue_join_answer_mail(internal.workspace_join_requests) from public;
revoke all on function internal.domains_due_for_dns_check(integer) from public;
grant execute on function internal.email_domain(text) to service_role;
grant execute on function internal.canonical_domain(text) to service_role;
grant execute on function internal.workspace_domain_facts(internal.workspace_domains) to service_role;
grant execute on function internal.join_request_facts(internal.workspace_join_requests) to service_role;

revoke all on function public.add_workspace_domain(uuid, text) from public;
revoke all on function public.list_workspace_domains(uuid) from public;
revoke all on function public.set_workspace_domain_policy(uuid, text, text) from public;
revoke all on function public.remove_workspace_domain(uuid) from public;
revoke all on function public.joinable_workspaces() from public;
revoke all on function public.join_workspace_by_domain(uuid) from public;
revoke all on function public.request_to_join_workspace(uuid) from public;
revoke all on function public.cancel_join_request(uuid) from public;
revoke all on function public.list_join_requests(uuid) from public;
revoke all on function public.answer_join_request(uuid, boolean) from public;
revoke all on function public.my_join_requests() from public;
grant execute on function public.add_workspace_domain(uuid, text) to authenticated;
grant execute on function public.list_workspace_domains(uuid) to authenticated;
grant execute on function public.set_workspace_domain_policy(uuid, text, text) to authenticated;
grant execute on function public.remove_workspace_domain(uuid) to authenticated;
grant execute on function public.joinable_workspaces() to authenticated;
grant execute on function public.join_workspace_by_domain(uuid) to authenticated;
grant execute on function public.request_to_join_workspace(uuid) to authenticated;
grant execute on function public.cancel_join_request(uuid) to authenticated;
grant execute on function public.list_join_requests(uuid) to authenticated;
grant execute on function public.answer_join_request(uuid, boolean) to authenticated;
grant execute on function public.my_join_requests() to authenticated;

alter function internal.workspace_admin_recipients(uuid) owner to service_role;
alter function internal.enqueue_join_request_mails(internal.workspace_join_requests) owner to service_role;
alter function internal.enqueue_domain_taken_over_mails(internal.workspace_domains) owner to service_role;
alter function internal.offer_domain_to_owner_claims(text) owner to service_role;
alter function public.request_domain_check(uuid) owner to service_role;
alter function internal.claim_requested_domain_checks(integer) owner to service_role;
revoke all on function internal.workspace_admin_recipients(uuid) from public;
revoke all on function internal.enqueue_join_request_mails(internal.workspace_join_requests) from public;
revoke all on function internal.enqueue_domain_taken_over_mails(internal.workspace_domains) from public;
revoke all on function internal.offer_domain_to_owner_claims(text) from public;
revoke all on function public.request_domain_check(uuid) from public;
revoke all on function internal.claim_requested_domain_checks(integer) from public;
grant execute on function internal.workspace_admin_recipients(uuid) to service_role;
grant execute on function public.request_domain_check(uuid) to authenticated;
