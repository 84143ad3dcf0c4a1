-- Invitation e-mails go through the outbox in the same transaction as the invitation, whoever
-- invites (server action or a direct RPC call): invite_member and resend_invitation now enqueue
-- the accept link. The raw token exists only in that e-mail and in the function's return value.

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
alter function internal.enqueue_invitation_mail(public.invitations, text) owner to service_role;
revoke execute on function internal.enqueue_invitation_mail(public.invitations, text) from public;
grant execute on function internal.enqueue_invitation_mail(public.invitations, text) to service_role;
grant insert on internal.outbox to service_role;
grant usage on sequence internal.outbox_id_seq to service_role;

create or replace function public.invite_member(workspace_id uuid, email text, role text default 'member')
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

create or replace function public.resend_invitation(invitation_id uuid)
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
