-- Realtime's postgres_changes, made cheaper at scale (decision 0081's measurements):
--
-- * realtime.visible_images checks each group of subscribers against only the changes that group
--   is a candidate for (groups[i].images, ordinals into images), rather than every change of the
--   batch against every group: with a thousand subscribers and a change reaching ten of them,
--   that is ten checks per change instead of a thousand. The check is prepared once per role and
--   call and executed per group, so groups do not each pay for planning the policies.
-- * realtime.change_scopes: a table may declare the column that scopes its rows to a workspace
--   (realtime.enable_changes(tbl, scope => 'workspace_id')). Its SELECT policies must then let only
--   members of a row's workspace read it (the tenancy API's helpers do): the server offers a change
--   only to subscribers who are members of the row's workspace, and still checks each of those
--   against the policies. Without a scope, every subscriber of the table is checked.

drop function realtime.visible_images(regclass, jsonb, jsonb);

create function realtime.visible_images(tbl regclass, images jsonb, groups jsonb,
  out group_index integer, out image_index integer, out error text)
returns setof record
language plpgsql set search_path = ''
as $$
declare
  g jsonb;
  gi integer := 0;
  prepared jsonb := '{}';
  probe_name text;
  permissive text;
  restrictive text;
  subset jsonb;
  ordinals integer[];
  found integer[];
  i integer;
begin
  for g in select * from jsonb_array_elements(groups) loop
    gi := gi + 1;
    -- One prepared statement per role and call: planned once, executed for each group (its
    -- images passed in a setting), so a thousand groups do not mean a thousand plans.
    if not prepared ? (g->>'role') then
      select string_agg(format('(%s)', pg_get_expr(p.polqual, p.polrelid)), ' or ') filter (where p.polpermissive),
             string_agg(format('(%s)', pg_get_expr(p.polqual, p.polrelid)), ' and ') filter (where not p.polpermissive)
        into permissive, restrictive
        from pg_policy p
       where p.polrelid = tbl and p.polcmd in ('r', '*') and p.polqual is not null
         and ('0'::oid = any (p.polroles)
              or (select r.oid from pg_roles r where r.rolname = g->>'role') = any (p.polroles));
      if permissive is null then
        probe_name := null;
      else
        probe_name := 'realtime_probe_' || md5(tbl::text || '/' || (g->>'role'));
        if exists (select 1 from pg_catalog.pg_prepared_statements s where s.name = probe_name) then
          execute format('deallocate %I', probe_name);
        end if;
        execute format(
          'prepare %I as select array_agg(k.ord::integer) '
          'from jsonb_array_elements(current_setting(''realtime.images'')::jsonb) with ordinality as k(v, ord) '
          'cross join lateral jsonb_populate_record(null::%s, k.v) as %I where (%s) and (%s)',
          probe_name, tbl, (select c.relname from pg_class c where c.oid = tbl), permissive,
          coalesce(restrictive, 'true'));
      end if;
      prepared := prepared || jsonb_build_object(g->>'role', probe_name);
    end if;
    probe_name := prepared->>(g->>'role');
    -- No policy lets this role read: nothing is visible (row-level security's default).
    continue when probe_name is null;
    ordinals := array(select jsonb_array_elements_text(g->'images')::integer);
    select coalesce(jsonb_agg(images->(o - 1) order by n), '[]') into subset
      from unnest(ordinals) with ordinality as u(o, n);
    begin
      perform set_config('realtime.images', subset::text, true);
      perform set_config('request.jwt.claims', (g->'claims')::text, true);
      perform set_config('request.jwt.claim.sub', coalesce(g->'claims'->>'sub', ''), true);
      perform set_config('request.jwt.claim.role', g->>'role', true);
      perform set_config('role', g->>'role', true);
      if g->>'role' = 'authenticated' then
        perform internal.require_active_caller();
      end if;
      execute format('execute %I', probe_name) into found;
      perform set_config('role', 'none', true);
      if found is not null then
        foreach i in array found loop
          group_index := gi; image_index := ordinals[i]; error := null;
          return next;
        end loop;
      end if;
    exception when others then
      group_index := gi; image_index := 0; error := sqlerrm;
      return next;
    end;
  end loop;
  perform set_config('role', 'none', true);
  for probe_name in select value #>> '{}' from jsonb_each(prepared) where value <> 'null' loop
    execute format('deallocate %I', probe_name);
  end loop;
end
$$;
revoke execute on function realtime.visible_images(regclass, jsonb, jsonb) from public;

create table realtime.change_scopes (
  relid oid primary key,
  scope_column text not null
);
revoke all on realtime.change_scopes from public, anon, authenticated, service_role;

drop function realtime.enable_changes(regclass);

-- For a team's migration: adds the table to the publication and starts capturing its changes at
-- once (rather than at the server's next sync); `scope` names the column holding the row's
-- workspace when only that workspace's members may read it.
create function realtime.enable_changes(tbl regclass, scope text default null) returns void
language plpgsql set search_path = ''
as $$
begin
  if scope is not null and not exists (
    select 1 from pg_attribute a
     where a.attrelid = tbl and a.attname = scope and not a.attisdropped and a.atttypid = 'uuid'::regtype
  ) then
    raise exception 'realtime.enable_changes: % has no uuid column %', tbl, scope using errcode = '42703';
  end if;
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
  if scope is null then
    delete from realtime.change_scopes where relid = tbl;
  else
    insert into realtime.change_scopes (relid, scope_column) values (tbl, scope)
    on conflict (relid) do update set scope_column = excluded.scope_column;
  end if;
end
$$;
revoke execute on function realtime.enable_changes(regclass, text) from public;

-- The workspaces each given user belongs to (at any role), for offering scoped changes.
create function realtime.memberships(users uuid[]) returns table (user_id uuid, workspace_ids uuid[])
language sql stable set search_path = ''
as $$
  select m.user_id, array_agg(m.workspace_id) from public.workspace_members m
   where m.user_id = any (users) group by m.user_id
$$;
revoke execute on function realtime.memberships(uuid[]) from public;
