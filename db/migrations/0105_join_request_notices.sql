-- Requests to join reach the people who answer them, and every message about them is a proper
-- e-mail: a new request e-mails the workspace's owners and admins (once a day per requester, so
-- asking, withdrawing and asking again cannot flood them), and both that notice and the answer to
-- the requester carry their facts (template.layout = 'notice') so the service renders them in the
-- product's HTML layout with a plain-text part (src/server/mail/notice-mail.tsx), as the
-- invitation does since migration 0086. Decision 0095, amended.

-- The owners and admins of a workspace who can be e-mailed (an address, confirmed, account not
-- deleted): whom every notice about the workspace goes to.
create function internal.workspace_admin_recipients(workspace_id uuid) returns table (user_id uuid, email text)
language sql stable security definer set search_path = ''
as $$
  select u.id, u.email from public.workspace_members m join auth.users u on u.id = m.user_id
  where m.workspace_id = workspace_admin_recipients.workspace_id and m.role >= 'admin'
    and u.email is not null and u.email_confirmed_at is not null and u.deleted_at is null
$$;

create or replace function internal.enqueue_join_answer_mail(r internal.workspace_join_requests) returns void
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

create or replace function public.request_to_join_workspace(workspace_id uuid) returns jsonb
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

alter function internal.workspace_admin_recipients(uuid) owner to service_role;
revoke all on function internal.workspace_admin_recipients(uuid) from public;
grant execute on function internal.workspace_admin_recipients(uuid) to service_role;
alter function internal.enqueue_join_request_mails(internal.workspace_join_requests) owner to service_role;
revoke all on function internal.enqueue_join_request_mails(internal.workspace_join_requests) from public;
