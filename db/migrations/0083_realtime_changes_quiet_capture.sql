-- Realtime's change capture, lighter for writers (decision 0081's measurements: with four writers
-- of one-row transactions, the outbox row cost about half the inserts per second, and the NOTIFY
-- in the same transaction about half of what was left, since every transaction that notifies
-- takes one global lock through its commit).
--
-- * No NOTIFY: the instances that have subscribers read the outbox every
--   REALTIME_CHANGES_POLL_MS instead (an index probe when nothing changed), so writers never
--   queue behind each other's commits, and nothing needs a LISTEN through a pooler.
-- * One index: the primary key is the reading order itself, (txid, id); pruning walks it from the
--   oldest end instead of keeping an index on captured_at.

create or replace function realtime.capture_change() returns trigger
language plpgsql security definer set search_path = ''
as $$
begin
  insert into realtime.changes (relid, op, record, old_record)
  values (
    tg_relid,
    case tg_op when 'INSERT' then 'I' when 'UPDATE' then 'U' else 'D' end,
    case when tg_op = 'DELETE' then null else to_jsonb(new) end,
    case when tg_op = 'INSERT' then null else to_jsonb(old) end
  );
  return null;
end
$$;

drop index realtime.changes_captured_at;
drop index realtime.changes_position;
alter table realtime.changes drop constraint changes_pkey;
alter table realtime.changes add primary key (txid, id);
