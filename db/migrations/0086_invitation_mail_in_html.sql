-- Invitation e-mails in HTML: the database still writes the invitation's e-mail in its own
-- transaction (subject and plain text as before), and now also the facts it tells, so the
-- service renders the same e-mail in the product's HTML layout when it is delivered or shown in
-- the development mailbox (src/server/mail/materialize.ts). Decision 0083.
alter table internal.outbox add column template jsonb;
comment on column internal.outbox.template is
  'What a message rendered at delivery says (kind-specific facts); null when its bodies are final';

create or replace function internal.enqueue_invitation_mail(invitation public.invitations, token text) returns void
language plpgsql security definer set search_path = ''
as $$
declare
  workspace_name text;
  inviter text;
  link text;
begin
  select w.name into workspace_name from public.workspaces w where w.id = invitation.workspace_id;
  select coalesce(nullif(btrim(p.display_name), ''), p.email) into inviter from public.profiles p where p.id = auth.uid();
  select s.app_url || '/invitations/accept?token=' || token into link from internal.app_settings s;
  insert into internal.outbox (kind, to_address, subject, text_body, headers, message_id, template)
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
    '<' || gen_random_uuid() || '@tenantry.invitation>',
    jsonb_build_object(
      'inviter', inviter,
      'workspace', workspace_name,
      'role', invitation.role,
      'email', invitation.email,
      'link', link,
      'expires_at', invitation.expires_at)
  );
end
$$;
