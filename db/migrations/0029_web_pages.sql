-- What the web pages need to tell people the truth, beyond the tenancy model of 0020:
--   * a renamed workspace's old address leads to its new one (for its members only);
--   * an invitation link says what it is before anyone acts on it: workspace, inviter, role, and
--     whether it is still open, used, revoked, declined, expired or replaced by a newer link;
--   * the billing page shows seats and projects used against the plan's limits, the same counts
--     the limits are enforced with (0022);
--   * the activity feed names the people in it, also after they left the workspace.
-- Reads only: every function here is stable and answers only for workspaces the caller is in.
-- See docs/decisions/0013-web-design-system.md.

-- ---------------------------------------------------------------------------------------------
-- Old slugs. One row per address a workspace had; a slug that becomes current again (for the
-- same workspace or another) stops redirecting.
-- ---------------------------------------------------------------------------------------------
create table internal.workspace_slug_history (
  slug text primary key,
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  replaced_at timestamptz not null default now()
);
create index workspace_slug_history_workspace_idx on internal.workspace_slug_history (workspace_id);

create function internal.remember_old_slug() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if tg_op = 'UPDATE' and new.slug is distinct from old.slug then
    insert into internal.workspace_slug_history (slug, workspace_id) values (old.slug, new.id)
    on conflict (slug) do update set workspace_id = excluded.workspace_id, replaced_at = now();
  end if;
  delete from internal.workspace_slug_history h where h.slug = new.slug;
  return null;
end
$$;
create trigger workspaces_remember_old_slug after insert or update of slug on public.workspaces
  for each row execute function internal.remember_old_slug();

-- The current slug of the workspace that had `old_slug`, if the caller is a member of it.
create function internal.renamed_workspace_slug(old_slug text) returns text
language sql stable security definer set search_path = ''
as $$
  select w.slug from internal.workspace_slug_history h join public.workspaces w on w.id = h.workspace_id
  where h.slug = old_slug and internal.my_role(w.id) is not null
$$;

-- ---------------------------------------------------------------------------------------------
-- Invitation links. Resending replaces a link's token (0020); the replaced token's hash is kept
-- so its link can say it was replaced instead of "not found".
-- ---------------------------------------------------------------------------------------------
create table internal.superseded_invitation_tokens (
  token_hash bytea primary key,
  invitation_id uuid not null references public.invitations (id) on delete cascade,
  superseded_at timestamptz not null default now()
);
create index superseded_invitation_tokens_invitation_idx on internal.superseded_invitation_tokens (invitation_id);

create function internal.remember_superseded_token() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  if new.token_hash is distinct from old.token_hash then
    insert into internal.superseded_invitation_tokens (token_hash, invitation_id)
    values (old.token_hash, old.invitation_id) on conflict (token_hash) do nothing;
  end if;
  return null;
end
$$;
create trigger invitation_tokens_remember_superseded after update of token_hash on internal.invitation_tokens
  for each row execute function internal.remember_superseded_token();

-- What a link's holder may know before acting: the workspace, who invited, the role, the
-- address it was sent to, and its state. Holding the token is the permission (it was mailed to
-- that address); the server calls this as the service, for signed-out visitors too.
create function internal.invitation_preview(token text)
returns table (state text, workspace_name text, inviter_name text, email text,
               role public.workspace_role, expires_at timestamptz)
language sql stable security definer set search_path = ''
as $$
  with found as (
    select i.id, false as superseded from internal.invitation_tokens t
      join public.invitations i on i.id = t.invitation_id
      where t.token_hash = internal.token_hash(coalesce(token, ''))
    union all
    select i.id, true from internal.superseded_invitation_tokens s
      join public.invitations i on i.id = s.invitation_id
      where s.token_hash = internal.token_hash(coalesce(token, ''))
  )
  select case
           when i.accepted_at is not null then 'accepted'
           when i.revoked_at is not null then 'revoked'
           when i.declined_at is not null then 'declined'
           when f.superseded then 'superseded'
           when i.expires_at <= now() then 'expired'
           else 'pending'
         end,
         w.name, coalesce(p.display_name, p.email), i.email, i.role, i.expires_at
  from found f
  join public.invitations i on i.id = f.id
  join public.workspaces w on w.id = i.workspace_id
  left join public.profiles p on p.id = i.invited_by
  limit 1
$$;

-- ---------------------------------------------------------------------------------------------
-- Plan usage: seats (members plus open invitations) and projects against the plan's limits,
-- counted as internal.enforce_seats and internal.enforce_projects count them.
-- ---------------------------------------------------------------------------------------------
create function internal.workspace_usage(ws uuid)
returns table (plan text, seats integer, seats_used integer, projects integer, projects_used integer,
               read_only boolean)
language sql stable security definer set search_path = ''
as $$
  select e.plan, e.seats,
         ((select count(*) from public.workspace_members m where m.workspace_id = ws)
          + (select count(*) from public.invitations i where i.workspace_id = ws and i.accepted_at is null
               and i.revoked_at is null and i.declined_at is null and i.expires_at > now()))::integer,
         e.projects,
         (select count(*) from public.projects p where p.workspace_id = ws)::integer,
         e.read_only
  from internal.workspace_entitlements(ws) e
  where internal.my_role(ws) is not null
$$;

-- ---------------------------------------------------------------------------------------------
-- Names in the activity feed: of the given people, those who appear in this workspace's
-- activity (as actor or as the member an event is about), also after they left it.
-- ---------------------------------------------------------------------------------------------
create function internal.activity_people(ws uuid, ids uuid[])
returns table (id uuid, name text, email text)
language sql stable security definer set search_path = ''
as $$
  select p.id, coalesce(p.display_name, p.email), p.email from public.profiles p
  where p.id = any (ids) and internal.my_role(ws) is not null
    and exists (select 1 from public.activity_events e
                where e.workspace_id = ws and (e.actor_id = p.id or e.data ->> 'user_id' = p.id::text))
$$;

alter function internal.remember_old_slug() owner to service_role;
alter function internal.renamed_workspace_slug(text) owner to service_role;
alter function internal.remember_superseded_token() owner to service_role;
alter function internal.invitation_preview(text) owner to service_role;
alter function internal.workspace_usage(uuid) owner to service_role;
alter function internal.activity_people(uuid, uuid[]) owner to service_role;
grant select, insert, update, delete on internal.workspace_slug_history, internal.superseded_invitation_tokens
  to service_role;
revoke execute on function internal.remember_old_slug(), internal.renamed_workspace_slug(text),
  internal.remember_superseded_token(), internal.invitation_preview(text), internal.workspace_usage(uuid),
  internal.activity_people(uuid, uuid[]) from public;
grant execute on function internal.remember_old_slug(), internal.renamed_workspace_slug(text),
  internal.remember_superseded_token(), internal.invitation_preview(text), internal.workspace_usage(uuid),
  internal.activity_people(uuid, uuid[]) to service_role;
grant execute on function internal.renamed_workspace_slug(text), internal.workspace_usage(uuid),
  internal.activity_people(uuid, uuid[]) to authenticated;
