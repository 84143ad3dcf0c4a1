-- Realtime (src/server/realtime/, decision 0080): the `realtime` schema as Supabase has it, so
-- policies written for Supabase's private channels run here unchanged.
--
-- * realtime.messages with Supabase's columns. On a private channel, whoever may SELECT a row of
--   the channel's topic (under their own role and claims) may receive, and whoever may INSERT one
--   may send; the server asks the table with the caller's claims at join and at each new access
--   token, and rolls its probe rows back. Nothing is kept here yet: rows only exist inside those
--   checks, so the table is not partitioned (Supabase partitions it by day for stored broadcasts).
-- * RLS enabled and forced with no policy: nobody but service_role joins a private channel until
--   a policy says so, as on Supabase.
-- * realtime.topic() names the channel being checked, for policies: `realtime.topic() = ...`.

create schema realtime;
revoke all on schema realtime from public;
grant usage on schema realtime to anon, authenticated, service_role;
grant create on schema realtime to service_role;

create table realtime.messages (
  id uuid primary key default gen_random_uuid(),
  topic text not null,
  extension text not null check (extension in ('broadcast', 'presence', 'postgres_changes')),
  payload jsonb,
  binary_payload bytea,
  event text,
  private boolean default false,
  inserted_at timestamp without time zone not null default now(),
  updated_at timestamp without time zone not null default now(),
  check (payload is null or binary_payload is null)
);
create index messages_topic_inserted_at on realtime.messages (topic, inserted_at);

alter table realtime.messages enable row level security;
alter table realtime.messages force row level security;

-- Supabase's grants: every API role may try, row-level security decides.
grant select, insert, update on realtime.messages to anon, authenticated, service_role;

-- The topic a check is about (without the `realtime:` prefix), or null outside one.
create function realtime.topic() returns text
language sql stable set search_path = ''
as $$
  select nullif(current_setting('realtime.topic', true), '')
$$;
grant execute on function realtime.topic() to anon, authenticated, service_role;
