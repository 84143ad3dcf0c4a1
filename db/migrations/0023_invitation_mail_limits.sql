-- Invitation e-mails are limited, so nobody can use invite_member / resend_invitation to flood an
-- address (or many addresses) with mail from this service. The limits live in the database,
-- beside the functions that write the e-mails, so they hold for every path: data-API RPC, server
-- actions, anything later. Names quoted in the e-mail cannot forge lines or headers.
-- See docs/decisions/0008-rows-stay-put-and-invitation-mail-limits.md.
--
-- Every invitation e-mail follows exactly one write of an invitation made on behalf of a user:
-- invite_member inserts it, resend_invitation renews its expires_at (clients cannot write
-- invitations themselves). A BEFORE trigger on those writes counts and records the e-mail;
-- refused, the whole call rolls back and nothing is sent.

-- Sliding windows: at most N e-mails in any `window_seconds`. One row; change with UPDATE.
create table internal.invitation_mail_limits (
  id boolean primary key default true check (id),
  window_seconds integer not null default 3600 check (window_seconds between 60 and 604800),
  -- to one address, from all workspaces together: what protects the person receiving them
  per_recipient integer not null default 3 check (per_recipient > 0),
  -- from one user, across all their workspaces
  per_inviter integer not null default 20 check (per_inviter > 0),
  -- from one workspace, all its admins together
  per_workspace integer not null default 50 check (per_workspace > 0)
);
insert into internal.invitation_mail_limits default values;

-- One row per invitation e-mail in the current window (older rows are pruned as new ones come).
-- No foreign keys: deleting a workspace or an account must not reset the counters.
create table internal.invitation_mail_log (
  id bigint generated always as identity primary key,
  sent_at timestamptz not null default now(),
  workspace_id uuid not null,
  inviter_id uuid not null,
  recipient text not null
);
create index invitation_mail_log_recipient_idx on internal.invitation_mail_log (recipient, sent_at);
create index invitation_mail_log_inviter_idx on internal.invitation_mail_log (inviter_id, sent_at);
create index invitation_mail_log_workspace_idx on internal.invitation_mail_log (workspace_id, sent_at);
create index invitation_mail_log_sent_idx on internal.invitation_mail_log (sent_at);
grant select, insert, update, delete on internal.invitation_mail_limits, internal.invitation_mail_log to service_role;

-- Seconds until a key may send again, given the times of its e-mails still in the window (oldest
-- first): 0 while under the limit, else until the e-mail that keeps it at the limit leaves.
create function internal.mail_retry_after(sent timestamptz[], lim integer, window_seconds integer)
returns integer
language sql stable set search_path = ''
as $$
  select case
    when coalesce(cardinality(sent), 0) < lim then 0
    else greatest(1, ceil(extract(epoch from
      sent[cardinality(sent) - lim + 1] + make_interval(secs => window_seconds) - now()))::integer)
  end
$$;

create function internal.limit_invitation_mail() returns trigger
language plpgsql security definer set search_path = ''
as $$
declare
  inviter uuid := auth.uid();
  cfg internal.invitation_mail_limits;
  since timestamptz;
  scope text;
  lim integer;
  wait integer := 0;
  minutes integer;
begin
  -- Only writes made for a user send e-mail; the service role writing invitations sends none.
  if not internal.acting_as_user() or inviter is null then
    return new;
  end if;
  if tg_op = 'UPDATE' and new.expires_at is not distinct from old.expires_at then
    return new;
  end if;
  select * into cfg from internal.invitation_mail_limits;
  since := now() - make_interval(secs => cfg.window_seconds);

  -- Serialise per key, always in this order (so two calls never wait on each other in a cycle):
  -- fifty calls at once must not all see the same count.
  perform pg_advisory_xact_lock(hashtextextended('invitation-mail/workspace/' || new.workspace_id, 0));
  perform pg_advisory_xact_lock(hashtextextended('invitation-mail/inviter/' || inviter, 0));
  perform pg_advisory_xact_lock(hashtextextended('invitation-mail/recipient/' || new.email, 0));

  wait := internal.mail_retry_after(array(select l.sent_at from internal.invitation_mail_log l
    where l.recipient = new.email and l.sent_at > since order by l.sent_at), cfg.per_recipient, cfg.window_seconds);
  scope := 'recipient';
  lim := cfg.per_recipient;
  if wait = 0 then
    wait := internal.mail_retry_after(array(select l.sent_at from internal.invitation_mail_log l
      where l.inviter_id = inviter and l.sent_at > since order by l.sent_at), cfg.per_inviter, cfg.window_seconds);
    scope := 'inviter';
    lim := cfg.per_inviter;
  end if;
  if wait = 0 then
    wait := internal.mail_retry_after(array(select l.sent_at from internal.invitation_mail_log l
      where l.workspace_id = new.workspace_id and l.sent_at > since order by l.sent_at), cfg.per_workspace, cfg.window_seconds);
    scope := 'workspace';
    lim := cfg.per_workspace;
  end if;

  if wait > 0 then
    -- PostgREST's custom error: the data API answers 429 with Retry-After; the message alone is
    -- what the web app shows.
    minutes := ceil(wait / 60.0)::integer;
    raise sqlstate 'PGRST' using
      message = json_build_object(
        'code', 'PT429',
        'message', case scope
            when 'recipient' then 'Too many invitation e-mails to this address.'
            when 'inviter' then 'Too many invitation e-mails from you.'
            else 'Too many invitation e-mails from this workspace.' end
          || format(' Try again in %s minutes.', minutes),
        'details', format('At most %s per %s per %s', lim,
          case when cfg.window_seconds = 3600 then 'hour' else cfg.window_seconds || ' seconds' end, scope),
        'hint', format('Try again in %s minutes', minutes))::text,
      detail = json_build_object('status', 429, 'headers', json_build_object('Retry-After', wait::text))::text;
  end if;

  -- Prune what no window needs any more; rows another call is deleting are left to it.
  delete from internal.invitation_mail_log l where l.id in (
    select o.id from internal.invitation_mail_log o where o.sent_at < since
    order by o.sent_at limit 100 for update skip locked);
  insert into internal.invitation_mail_log (workspace_id, inviter_id, recipient)
  values (new.workspace_id, inviter, new.email);
  return new;
end
$$;
create trigger invitations_limit_mail before insert or update of expires_at on public.invitations
  for each row execute function internal.limit_invitation_mail();

-- ---------------------------------------------------------------------------------------------
-- Names that e-mails quote (the workspace name, the inviter's display name) are single lines of
-- visible text: no line breaks that could forge lines of the e-mail body or split a header, no
-- other control characters, no bidirectional overrides that make text read differently. A user
-- writing one gets a 400; server-side writes (sign-up metadata) are cleaned instead, so a
-- sign-up never fails over a display name.
-- ---------------------------------------------------------------------------------------------
create function internal.printable_name(value text, label text) returns text
language plpgsql stable set search_path = ''
as $$
begin
  if value is null or value !~ '[\x01-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]' then
    return value;
  end if;
  if internal.acting_as_user() then
    raise exception '% cannot contain control characters such as line breaks', label using errcode = '22023';
  end if;
  return btrim(regexp_replace(value, '[\x01-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]+', ' ', 'g'));
end
$$;

create function internal.check_workspace_name() returns trigger
language plpgsql set search_path = ''
as $$
begin
  new.name := internal.printable_name(new.name, 'Workspace name');
  return new;
end
$$;
-- Named to run before workspaces_validate (triggers fire in name order), which trims and checks length.
create trigger workspaces_name_printable before insert or update of name on public.workspaces
  for each row execute function internal.check_workspace_name();

create function internal.check_display_name() returns trigger
language plpgsql set search_path = ''
as $$
begin
  new.display_name := nullif(internal.printable_name(new.display_name, 'Display name'), '');
  return new;
end
$$;
create trigger profiles_display_name_printable before insert or update of display_name on public.profiles
  for each row execute function internal.check_display_name();

-- Names written before this rule are cleaned the same way (rare: only the data API could write them).
update public.profiles set display_name = display_name
where display_name ~ '[\x01-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]';
update public.workspaces set name = coalesce(nullif(internal.printable_name(name, ''), ''), 'Workspace')
where name ~ '[\x01-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]';

alter function internal.limit_invitation_mail() owner to service_role;
revoke execute on function internal.mail_retry_after(timestamptz[], integer, integer),
  internal.limit_invitation_mail(), internal.printable_name(text, text), internal.check_workspace_name(),
  internal.check_display_name() from public;
grant execute on function internal.mail_retry_after(timestamptz[], integer, integer),
  internal.limit_invitation_mail(), internal.printable_name(text, text), internal.check_workspace_name(),
  internal.check_display_name() to service_role;
-- Evaluated as the caller for a user's direct PATCH of their name.
grant execute on function internal.printable_name(text, text), internal.check_workspace_name(),
  internal.check_display_name() to authenticated;
