-- A DNS proof outranks an owner's address (decision 0095, amended). Until now the first workspace
-- to verify a domain held it: an employee whose own workspace was verified by their address on
-- acme.com kept the company's workspace from verifying acme.com at all. Control of the domain's
-- DNS is the stronger proof, so a workspace may now claim a domain another workspace holds by an
-- owner's address, and when its TXT record is found (on "Check now" or the 15-minute pass) it
-- takes the domain over: the holder's claim becomes unverified (its members stay; nobody new
-- joins by the domain there) and its owners and admins are told by e-mail. A domain held by DNS
-- stays refused to others. When a verified claim is lost (its DNS record gone) or removed, an
-- owner-address claim elsewhere may take the domain back at once, with the policy it had.

-- Claims a domain for the workspace (owners and admins): verified at once when an owner's
-- confirmed address is on it and nobody holds it; otherwise the answer carries the TXT record to
-- publish, and whether another workspace holds the domain now (by an owner's address: the
-- record, once found, takes it over).
create or replace function public.add_workspace_domain(workspace_id uuid, domain text) returns jsonb
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

-- Removes a claim; a verified one leaves its domain to the other workspaces' owner-address claims.
create or replace function public.remove_workspace_domain(domain_id uuid) returns jsonb
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
create or replace function internal.record_domain_dns_check(domain_id uuid, record_found boolean, requested_by uuid default null)
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

alter function internal.enqueue_domain_taken_over_mails(internal.workspace_domains) owner to service_role;
alter function internal.offer_domain_to_owner_claims(text) owner to service_role;
revoke all on function internal.enqueue_domain_taken_over_mails(internal.workspace_domains) from public;
revoke all on function internal.offer_domain_to_owner_claims(text) from public;

-- Checks asked for through the API. "Check now" on the settings page looks the record up at once,
-- but SQL cannot, so an integration calling the data API asks here and every instance looks for
-- asked checks every few seconds (src/server/domains/requested-checks.ts); the answer shows in
-- list_workspace_domains (last_checked_at, verified).
alter table internal.workspace_domains add column check_requested_at timestamptz;
create index workspace_domains_check_requested_idx on internal.workspace_domains (check_requested_at)
  where check_requested_at is not null;

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

alter function public.request_domain_check(uuid) owner to service_role;
alter function internal.claim_requested_domain_checks(integer) owner to service_role;
revoke all on function public.request_domain_check(uuid) from public;
revoke all on function internal.claim_requested_domain_checks(integer) from public;
grant execute on function public.request_domain_check(uuid) to authenticated;
