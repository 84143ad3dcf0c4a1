-- Broadcast from the database (src/server/realtime/messages.ts, decision 0084): realtime.send and
-- realtime.broadcast_changes as Supabase defines them, and realtime.messages as a stored outbox
-- every instance with subscribers reads, in commit-safe order, as it reads realtime.changes.
--
-- * txid and seq give each message its place: the writing transaction's id, then the order it was
--   written in. Readers take rows in (txid, seq) order and only below their snapshot's xmin, so a
--   transaction that commits late is never stepped over (the reasoning of decision 0081).
-- * inserted_at is UTC, as on Supabase: replay compares it with a client's `since` (ms epoch), and
--   retention deletes by it (index messages_inserted_at, a batch per statement).
-- * A row's topic must be the topic its policies are asked about: where row-level security applies
--   to the writer, an insert or update whose topic is not realtime.topic() is refused. Otherwise a
--   caller could set realtime.topic to a topic their INSERT policy allows and write a row for
--   another one. realtime.send sets realtime.topic itself, so it always passes this check.
-- * realtime.send is SECURITY INVOKER and granted to every API role, as on Supabase: the caller's
--   INSERT policies on realtime.messages decide. A refusal (or any error) is a WARNING and the
--   caller's transaction goes on.

alter table realtime.messages
  add column txid xid8 not null default pg_current_xact_id(),
  add column seq bigint generated always as identity;
alter table realtime.messages alter column inserted_at set default timezone('utc', now());
alter table realtime.messages alter column updated_at set default timezone('utc', now());
create index messages_position on realtime.messages (txid, seq);
create index messages_inserted_at on realtime.messages (inserted_at);
-- Deleting old messages is the server's, under service_role (which bypasses row-level security).
grant delete on realtime.messages to service_role;

create function realtime.check_message_topic() returns trigger
language plpgsql set search_path = ''
as $$
begin
  if row_security_active('realtime.messages'::regclass)
     and new.topic is distinct from realtime.topic() then
    raise exception 'realtime.messages: a message''s topic (%) must be the topic being checked (realtime.topic() is %)',
      new.topic, coalesce(realtime.topic(), 'not set')
      using errcode = '42501';
  end if;
  return new;
end
$$;

create trigger messages_topic_is_checked before insert or update on realtime.messages
  for each row execute function realtime.check_message_topic();

-- Stores one broadcast; the server delivers it to the topic's subscribers (on a private topic, to
-- those whose SELECT policies let them read broadcasts). payload.id is added when missing (the
-- row's id, which subscribers also get as meta.id).
create function realtime.send(payload jsonb, event text, topic text, private boolean default true)
returns void
language plpgsql set search_path = ''
as $$
declare
  generated_id uuid;
  final_payload jsonb;
  previous_topic text;
begin
  begin
    generated_id := gen_random_uuid();
    if payload is not null and jsonb_typeof(payload) = 'object' and not payload ? 'id' then
      final_payload := jsonb_set(payload, '{id}', to_jsonb(generated_id));
    else
      final_payload := payload;
    end if;
    -- The policies are asked about this topic; the caller's own setting is put back afterwards.
    previous_topic := current_setting('realtime.topic', true);
    perform set_config('realtime.topic', topic, true);
    insert into realtime.messages (id, payload, event, topic, private, extension)
    values (generated_id, final_payload, event, topic, private, 'broadcast');
    perform set_config('realtime.topic', coalesce(previous_topic, ''), true);
  exception when others then
    perform set_config('realtime.topic', coalesce(previous_topic, ''), true);
    raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
  end;
end
$$;

-- The same for bytes: delivered as a binary frame to vsn 2.0.0 sockets (1.0.0 cannot receive
-- bytes). Literals must be typed ('\x01'::bytea, '{}'::jsonb) to choose between the two.
create function realtime.send(binary_payload bytea, event text, topic text, private boolean default true)
returns void
language plpgsql set search_path = ''
as $$
declare
  previous_topic text;
begin
  begin
    previous_topic := current_setting('realtime.topic', true);
    perform set_config('realtime.topic', topic, true);
    insert into realtime.messages (binary_payload, event, topic, private, extension)
    values (binary_payload, event, topic, private, 'broadcast');
    perform set_config('realtime.topic', coalesce(previous_topic, ''), true);
  exception when others then
    perform set_config('realtime.topic', coalesce(previous_topic, ''), true);
    raise warning 'ErrorSendingBroadcastMessage: %', sqlerrm;
  end;
end
$$;

grant execute on function realtime.send(jsonb, text, text, boolean) to anon, authenticated, service_role;
grant execute on function realtime.send(bytea, text, text, boolean) to anon, authenticated, service_role;

-- For a row trigger: sends {old_record, record, operation, table, schema} on the topic (private),
-- which realtime-js types as RealtimeBroadcast{Insert,Update,Delete}Payload.
create function realtime.broadcast_changes(topic_name text, event_name text, operation text,
  table_name text, table_schema text, new record, old record, level text default 'ROW')
returns void
language plpgsql set search_path = ''
as $$
declare
  row_data jsonb;
begin
  if level = 'STATEMENT' then
    raise exception 'function can only be triggered for each row, not for each statement';
  end if;
  if operation in ('INSERT', 'UPDATE', 'DELETE') then
    row_data := jsonb_build_object('old_record', old, 'record', new, 'operation', operation,
                                   'table', table_name, 'schema', table_schema);
    perform realtime.send(row_data, event_name, topic_name);
  else
    raise exception 'Unexpected operation type: %', operation;
  end if;
exception when others then
  raise exception 'Failed to process the row: %', sqlerrm;
end
$$;
grant execute on function realtime.broadcast_changes(text, text, text, text, text, record, record, text)
  to anon, authenticated, service_role;

-- The server's reads and deletes. realtime.messages forces row-level security, so they run as
-- service_role (which bypasses it, decision 0089) and no API role may call them.

-- Messages past a position, in (txid, seq) order, only from transactions below the snapshot's
-- xmin (all ended); `held` says committed messages wait behind a transaction still running.
create function realtime.messages_after(after_txid xid8, after_seq bigint, max_rows integer,
  out id uuid, out txid xid8, out seq bigint, out topic text, out private boolean, out event text,
  out payload jsonb, out binary_payload bytea, out held boolean)
returns setof record
language sql stable security definer set search_path = ''
as $$
  with x as (select pg_snapshot_xmin(pg_current_snapshot()) as xmin)
  select m.id, m.txid, m.seq, m.topic, m.private, m.event, m.payload, m.binary_payload,
         exists (select 1 from realtime.messages h, x where h.txid >= x.xmin)
    from x
    left join lateral (
      select r.* from realtime.messages r
       where (r.txid, r.seq) > (after_txid, after_seq) and r.txid < x.xmin and r.extension = 'broadcast'
       order by r.txid, r.seq limit max_rows) m on true
$$;

-- Where a reader starting now begins: the newest message every running transaction is past.
create function realtime.messages_tail(out txid xid8, out seq bigint)
returns setof record
language sql stable security definer set search_path = ''
as $$
  select m.txid, m.seq from realtime.messages m
   where m.txid < pg_snapshot_xmin(pg_current_snapshot())
   order by m.txid desc, m.seq desc limit 1
$$;

-- A private topic's stored broadcasts since `since_ms` (ms epoch) up to a position: the newest
-- `max_rows`, oldest first.
create function realtime.replay_messages(topic_name text, since_ms bigint, up_to_txid xid8, up_to_seq bigint,
  max_rows integer,
  out id uuid, out event text, out payload jsonb, out binary_payload bytea)
returns setof record
language sql stable security definer set search_path = ''
as $$
  select r.id, r.event, r.payload, r.binary_payload from (
    select m.* from realtime.messages m
     where m.topic = topic_name and m.private and m.extension = 'broadcast'
       and m.inserted_at >= timezone('utc', to_timestamp(since_ms / 1000.0))
       and (m.txid, m.seq) <= (up_to_txid, up_to_seq)
     order by m.txid desc, m.seq desc limit max_rows) r
   order by r.txid, r.seq
$$;

-- Deletes up to `max_rows` messages older than the window (never one a reader could still be
-- behind); returns how many.
create function realtime.prune_messages(retention_ms bigint, max_rows integer) returns integer
language plpgsql security definer set search_path = ''
as $$
declare
  gone integer;
begin
  delete from realtime.messages where ctid = any (array(
    select m.ctid from realtime.messages m
     where m.inserted_at < timezone('utc', now()) - make_interval(secs => retention_ms / 1000.0)
       and m.txid < pg_snapshot_xmin(pg_current_snapshot())
     limit max_rows));
  get diagnostics gone = row_count;
  return gone;
end
$$;

alter function realtime.messages_after(xid8, bigint, integer) owner to service_role;
alter function realtime.messages_tail() owner to service_role;
alter function realtime.replay_messages(text, bigint, xid8, bigint, integer) owner to service_role;
alter function realtime.prune_messages(bigint, integer) owner to service_role;
revoke execute on function realtime.messages_after(xid8, bigint, integer) from public;
revoke execute on function realtime.messages_tail() from public;
revoke execute on function realtime.replay_messages(text, bigint, xid8, bigint, integer) from public;
revoke execute on function realtime.prune_messages(bigint, integer) from public;
