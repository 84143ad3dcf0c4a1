-- An accepted invitation told the activity feed twice: "accepted the invitation" (the invitation's
-- trigger) and "joined" (the membership's, a moment later in the same transaction). The
-- membership's line is now left out when an invitation accepted by that user in this very
-- transaction brought it; a member added any other way is still told.
create or replace function internal.on_member_changed() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  who text;
begin
  select p.email into who from public.profiles p where p.id = coalesce(new.user_id, old.user_id);
  if tg_op = 'INSERT' then
    if not exists (
      select 1 from public.invitations i
      where i.workspace_id = new.workspace_id and i.accepted_by = new.user_id and i.accepted_at = now()
    ) then
      perform internal.log_activity(new.workspace_id, 'member.added', who,
        jsonb_build_object('user_id', new.user_id, 'role', new.role));
    end if;
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
