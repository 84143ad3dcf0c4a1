-- Realtime's postgres_changes (src/server/realtime/changes.ts, decision 0081): changes are captured
-- by a trigger into an outbox that every instance tails, so no superuser, no logical replication
-- and no single leader are needed, and a reconnecting client can be given what it missed.
--
-- * Publication `supabase_realtime` says which tables are watched, as on Supabase. Creating an
--   empty publication needs only CREATE on the database (the installing role has it); adding a
--   table needs its ownership, which whoever creates the table has.
-- * realtime.changes: one row per changed row, written by realtime.capture_change() in the
--   writing transaction (so it commits or rolls back with it), with the transaction's id. Rows
--   are read in (txid, id) order and only once every transaction below the reader's snapshot
--   xmin has ended, so a transaction that commits late is never stepped over.
-- * NOTIFY tenantry_realtime_changes is only a wake-up (empty payload, one per transaction:
--   PostgreSQL folds identical notifications of a transaction into one).
-- * realtime.resume_points: where each resumable subscription (session, topic, bindings) was,
--   shared by every instance, so a client that reconnects anywhere is given what it missed.
-- * realtime.change_horizon: the newest change pruned; a resume point behind it has lost changes.

do $$
begin
  if not exists (select 1 from pg_publication where pubname = 'supabase_realtime') then
    create publication supabase_realtime;
  end if;
end
$$;

create table realtime.changes (
  id bigint generated always as identity primary key,
  txid xid8 not null default pg_current_xact_id(),
  captured_at timestamptz not null default clock_timestamp(),
  relid oid not null,
  op "char" not null check (op in ('I', 'U', 'D')),
  record jsonb,
  old_record jsonb
);
create index changes_position on realtime.changes (txid, id);
create index changes_captured_at on realtime.changes (captured_at);
revoke all on realtime.changes from public, anon, authenticated, service_role;

create table realtime.resume_points (
  key text primary key,
  txid xid8 not null,
  change_id bigint not null,
  -- the channel that holds it now (null once it has left); a later join of the same key takes it
  holder uuid,
  updated_at timestamptz not null default now()
);
create index resume_points_updated_at on realtime.resume_points (updated_at);
revoke all on realtime.resume_points from public, anon, authenticated, service_role;

create table realtime.change_horizon (
  only_row boolean primary key default true check (only_row),
  txid xid8 not null,
  change_id bigint not null
);
insert into realtime.change_horizon (txid, change_id) values ('0'::xid8, 0);
revoke all on realtime.change_horizon from public, anon, authenticated, service_role;

-- The capture trigger's function. SECURITY DEFINER so the writing role (authenticated, through
-- the data API) needs no right on the outbox; it records the whole row, old and new: what a
-- subscriber may see of it (replica identity, selected columns, row-level security) is decided
-- when it is delivered.
create function realtime.capture_change() returns trigger
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
  perform pg_notify('tenantry_realtime_changes', '');
  return null;
end
$$;
revoke execute on function realtime.capture_change() from public;

-- Puts the capture trigger on every table of the publication in the given schemas, and takes it
-- off tables that left the publication. Returns how many tables it changed. The server runs it
-- at start and every few seconds; a migration may run it (or realtime.enable_changes) itself.
create function realtime.sync_changes(schemas text[]) returns integer
language plpgsql set search_path = ''
as $$
declare
  t record;
  changed integer := 0;
begin
  for t in
    select c.oid::regclass as rel
      from pg_publication_tables p
      join pg_namespace n on n.nspname = p.schemaname
      join pg_class c on c.relnamespace = n.oid and c.relname = p.tablename
     where p.pubname = 'supabase_realtime' and p.schemaname = any (schemas)
       and c.relkind = 'r'
       and not exists (select 1 from pg_trigger g where g.tgrelid = c.oid and g.tgname = 'realtime_changes')
  loop
    execute format('create trigger realtime_changes after insert or update or delete on %s '
                   'for each row execute function realtime.capture_change()', t.rel);
    changed := changed + 1;
  end loop;
  for t in
    select g.tgrelid::regclass as rel
      from pg_trigger g
     where g.tgname = 'realtime_changes'
       and g.tgfoid = 'realtime.capture_change()'::regprocedure
       and not exists (
         select 1 from pg_publication_tables p
           join pg_namespace n on n.nspname = p.schemaname
           join pg_class c on c.relnamespace = n.oid and c.relname = p.tablename
          where p.pubname = 'supabase_realtime' and c.oid = g.tgrelid and p.schemaname = any (schemas))
  loop
    execute format('drop trigger realtime_changes on %s', t.rel);
    changed := changed + 1;
  end loop;
  return changed;
end
$$;
revoke execute on function realtime.sync_changes(text[]) from public;

-- For a team's migration: adds the table to the publication and starts capturing its changes
-- at once (rather than at the server's next sync).
create function realtime.enable_changes(tbl regclass) returns void
language plpgsql set search_path = ''
as $$
begin
  if not exists (
    select 1 from pg_publication_rel r join pg_publication p on p.oid = r.prpubid
     where p.pubname = 'supabase_realtime' and r.prrelid = tbl
  ) then
    execute format('alter publication supabase_realtime add table %s', tbl);
  end if;
  if not exists (select 1 from pg_trigger where tgrelid = tbl and tgname = 'realtime_changes') then
    execute format('create trigger realtime_changes after insert or update or delete on %s '
                   'for each row execute function realtime.capture_change()', tbl);
  end if;
end
$$;
revoke execute on function realtime.enable_changes(regclass) from public;

-- Which of the given row images of `tbl` each group of subscribers may read, each group under its
-- own role and claims: the table's SELECT policies for that role (permissive ones OR'ed,
-- restrictive ones AND'ed, as PostgreSQL combines them) evaluated on each image, the row as the
-- change left it (the old row for a DELETE). Judging the image rather than the current row (what
-- Supabase's apply_rls does) means a row updated or deleted again before delivery is still judged
-- as it was, and a DELETE is judged at all. One statement for a whole batch: groups[i] =
-- {"role": ..., "claims": {...}}, images = [{...row...}, ...]. Returns (group index, image
-- index) pairs, both from 1. A group whose check raises (a policy casting a bad claim, an ended
-- session) is reported with image index 0 and its error, and the others go on: one subscriber
-- never stops the rest. SECURITY INVOKER: it runs as the server's role, which may switch to the
-- request roles, so each policy runs with the subscriber's rights.
create function realtime.visible_images(tbl regclass, images jsonb, groups jsonb,
  out group_index integer, out image_index integer, out error text)
returns setof record
language plpgsql set search_path = ''
as $$
declare
  g jsonb;
  gi integer := 0;
  probes jsonb := '{}';
  probe text;
  permissive text;
  restrictive text;
  found integer[];
  i integer;
begin
  for g in select * from jsonb_array_elements(groups) loop
    gi := gi + 1;
    if not probes ? (g->>'role') then
      select string_agg(format('(%s)', pg_get_expr(p.polqual, p.polrelid)), ' or ') filter (where p.polpermissive),
             string_agg(format('(%s)', pg_get_expr(p.polqual, p.polrelid)), ' and ') filter (where not p.polpermissive)
        into permissive, restrictive
        from pg_policy p
       where p.polrelid = tbl and p.polcmd in ('r', '*') and p.polqual is not null
         and ('0'::oid = any (p.polroles)
              or (select r.oid from pg_roles r where r.rolname = g->>'role') = any (p.polroles));
      probes := probes || jsonb_build_object(g->>'role', case when permissive is null then null else format(
        'select array_agg(k.ord::integer) from jsonb_array_elements($1) with ordinality as k(v, ord) '
        'cross join lateral jsonb_populate_record(null::%s, k.v) as %I where (%s) and (%s)',
        tbl, (select c.relname from pg_class c where c.oid = tbl), permissive, coalesce(restrictive, 'true')) end);
    end if;
    probe := probes->>(g->>'role');
    -- No policy lets this role read: nothing is visible (row-level security's default).
    continue when probe is null;
    begin
      perform set_config('request.jwt.claims', (g->'claims')::text, true);
      perform set_config('request.jwt.claim.sub', coalesce(g->'claims'->>'sub', ''), true);
      perform set_config('request.jwt.claim.role', g->>'role', true);
      perform set_config('role', g->>'role', true);
      if g->>'role' = 'authenticated' then
        perform internal.require_active_caller();
      end if;
      execute probe into found using images;
      perform set_config('role', 'none', true);
      if found is not null then
        foreach i in array found loop
          group_index := gi; image_index := i; error := null;
          return next;
        end loop;
      end if;
    exception when others then
      group_index := gi; image_index := 0; error := sqlerrm;
      return next;
    end;
  end loop;
  perform set_config('role', 'none', true);
end
$$;
revoke execute on function realtime.visible_images(regclass, jsonb, jsonb) from public;
