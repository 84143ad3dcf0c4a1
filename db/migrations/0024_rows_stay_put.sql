-- Rows never move between workspaces, or between users. A row's workspace (and, where a row
-- belongs to a user, that user) is fixed when it is created: limits are counted and the read-only
-- state of an overdue workspace is checked where a row is, so a row that could move would carry
-- data past both (moving projects into a full workspace, or out of a read-only one). Enforced for
-- everyone, the service role included: nothing in the service needs to move rows, and a move is
-- always expressible as an insert in the other workspace plus a delete.
-- See docs/decisions/0008-rows-stay-put-and-invitation-mail-limits.md.
--
-- Refusal: 42501 (HTTP 403), "<column> cannot be changed: <why>", the same SQLSTATE the members
-- trigger of 0020 uses for moving memberships.

create function internal.refuse_change() returns trigger
language plpgsql set search_path = ''
as $$
begin
  -- tg_argv: the column, then why it is fixed (the triggers below fire only when it changes)
  raise exception '% cannot be changed: %', tg_argv[0], tg_argv[1]
    using errcode = '42501', hint = 'Create a new row where it belongs and delete this one';
end
$$;

create trigger projects_stay_in_workspace before update of workspace_id on public.projects
  for each row when (new.workspace_id is distinct from old.workspace_id)
  execute function internal.refuse_change('workspace_id', 'a project stays in the workspace it was created in');

create trigger members_stay_in_workspace before update of workspace_id on public.workspace_members
  for each row when (new.workspace_id is distinct from old.workspace_id)
  execute function internal.refuse_change('workspace_id', 'a membership belongs to one workspace');
create trigger members_stay_with_user before update of user_id on public.workspace_members
  for each row when (new.user_id is distinct from old.user_id)
  execute function internal.refuse_change('user_id', 'a membership belongs to one user');

create trigger invitations_stay_in_workspace before update of workspace_id on public.invitations
  for each row when (new.workspace_id is distinct from old.workspace_id)
  execute function internal.refuse_change('workspace_id', 'an invitation belongs to one workspace');
-- The link was mailed to that address; readdressing would hand it to someone else.
create trigger invitations_stay_addressed before update of email on public.invitations
  for each row when (new.email is distinct from old.email)
  execute function internal.refuse_change('email', 'an invitation stays addressed to the e-mail its link was sent to');

create trigger activity_stays_in_workspace before update of workspace_id on public.activity_events
  for each row when (new.workspace_id is distinct from old.workspace_id)
  execute function internal.refuse_change('workspace_id', 'an activity event belongs to one workspace');

create trigger subscriptions_stay_in_workspace before update of workspace_id on public.subscriptions
  for each row when (new.workspace_id is distinct from old.workspace_id)
  execute function internal.refuse_change('workspace_id', 'a subscription belongs to one workspace');

create trigger workspaces_keep_id before update of id on public.workspaces
  for each row when (new.id is distinct from old.id)
  execute function internal.refuse_change('id', 'a workspace keeps its id');

create trigger profiles_stay_with_user before update of id on public.profiles
  for each row when (new.id is distinct from old.id)
  execute function internal.refuse_change('id', 'a profile belongs to one user');

create trigger preferences_stay_with_user before update of user_id on public.notification_preferences
  for each row when (new.user_id is distinct from old.user_id)
  execute function internal.refuse_change('user_id', 'notification preferences belong to one user');

-- ---------------------------------------------------------------------------------------------
-- Seats were counted only when an invitation was inserted. An expired invitation holds no seat,
-- and resend_invitation renews it: that reopened it without a count, so a full workspace could
-- hold one more open invitation per expired one. Reopening now takes a seat like a new
-- invitation (the same check, internal.enforce_seats of 0022). Named to fire before
-- invitations_limit_mail, so both paths lock the workspace row before the mail-limit locks.
-- ---------------------------------------------------------------------------------------------
create trigger invitations_enforce_seats_on_reopen before update of expires_at on public.invitations
  for each row when (old.expires_at <= now() and new.expires_at > now()
                     and new.accepted_at is null and new.revoked_at is null and new.declined_at is null)
  execute function internal.enforce_seats();

revoke execute on function internal.refuse_change() from public;
grant execute on function internal.refuse_change() to authenticated, service_role;
