-- A session keeps its own refresh-token chain (docs/decisions/0027): the active token's hash, its
-- parent's hash and when the active token was issued. A refresh token names its session (its
-- first 22 characters), so a grant finds the session by its primary key and rotates the token
-- with one heap-only update of that one row: no token row, no index entry, no foreign-key check
-- per grant. Same rules as 0026: rotation, the reuse interval, reuse detection, expiry, the
-- per-session limit, banned users.

-- Neither column is indexed: changing them keeps the update heap-only, for which each page
-- leaves room.
alter table auth.sessions
  add column refresh_token_hash bytea,
  add column refresh_parent_hash bytea,
  add column refresh_rotated_at timestamptz;
alter table auth.sessions set (fillfactor = 70);

-- Sessions opened before this migration carry on: their live token (and its parent) move into
-- the session row. Their older tokens stay in auth.refresh_tokens, which is no longer written;
-- a token issued before this migration is still found there (and its reuse still recognised).
update auth.sessions s
set refresh_token_hash = t.token_hash, refresh_parent_hash = p.token_hash, refresh_rotated_at = t.updated_at
from auth.refresh_tokens t
left join auth.refresh_tokens p on p.id = t.parent_id
where t.session_id = s.id
  and t.id = (select max(l.id) from auth.refresh_tokens l where l.session_id = s.id and not l.revoked);

drop function auth.refresh_grant(bytea, bytea, integer, integer, integer, integer);

-- p_legacy_child_hash: for a token issued before this migration, the hash of its child as it was
-- derived then (without the session's name), so a retry with the parent of a live token of before
-- gets that very child again; null otherwise.

-- The common case is a single statement: the update succeeds only when the presented token is
-- the active one, unexpired, within the session's limit and the user not banned. Anything else
-- takes the slower path, which locks the session and tells the outcomes apart. The user comes
-- back whole, as JSON (with its identities), as 0026 returned it.
create function auth.refresh_grant(
  p_session uuid,
  p_hash bytea,
  p_child_hash bytea,
  p_ttl_seconds integer,
  p_reuse_seconds integer,
  p_max_per_window integer,
  p_window_seconds integer,
  p_legacy_child_hash bytea
)
returns table (outcome text, retry_after integer, session json, "user" json)
language plpgsql
set search_path = ''
as $$
declare
  v_window_start timestamptz :=
    to_timestamp(floor(extract(epoch from now()) / p_window_seconds) * p_window_seconds);
  v_active bytea;
  v_parent bytea;
  v_rotated_at timestamptz;
  v_count_start timestamptz;
  v_count integer;
  v_user uuid;
  v_banned boolean;
begin
  return query
    update auth.sessions s set
      refresh_parent_hash = s.refresh_token_hash,
      refresh_token_hash = p_child_hash,
      refresh_rotated_at = now(),
      refreshed_at = now(),
      updated_at = now(),
      refresh_window_start = v_window_start,
      refresh_count = case when s.refresh_window_start = v_window_start then s.refresh_count + 1 else 1 end
    where s.id = p_session
      and s.refresh_token_hash = p_hash
      and s.refresh_rotated_at >= now() - make_interval(secs => p_ttl_seconds)
      and (s.refresh_window_start is distinct from v_window_start or s.refresh_count < p_max_per_window)
      and not exists (select 1 from auth.users b where b.id = s.user_id and b.banned_until > now())
    returning 'rotated', null::integer,
      json_build_object('id', s.id, 'user_id', s.user_id, 'aal', s.aal, 'amr', s.amr),
      (select json_build_object('row', to_json(u), 'identities',
         (select json_agg(i order by i.created_at) from auth.identities i where i.user_id = u.id))
       from auth.users u where u.id = s.user_id);
  if found then
    return;
  end if;

  -- Not the common case: lock the session and look again (a rotation committed meanwhile is seen).
  select s.refresh_token_hash, s.refresh_parent_hash, s.refresh_rotated_at, s.refresh_window_start,
         s.refresh_count, s.user_id, coalesce(u.banned_until > now(), false)
    into v_active, v_parent, v_rotated_at, v_count_start, v_count, v_user, v_banned
  from auth.sessions s join auth.users u on u.id = s.user_id
  where s.id = p_session
  for update of s;
  if v_user is null then
    return query select 'not_found', null::integer, null::json, null::json;
    return;
  end if;

  if v_active is distinct from p_hash then
    if v_parent = p_hash then
      -- The parent of the active token: a retry within the reuse interval gets the same child.
      -- (null-safe: a null never lets a reuse pass for a retry)
      if not coalesce(v_rotated_at >= now() - make_interval(secs => p_reuse_seconds)
                      and (v_active = p_child_hash or v_active = p_legacy_child_hash), false) then
        delete from auth.sessions where id = p_session;
        return query select 'reuse_detected', null::integer, null::json, null::json;
        return;
      end if;
    elsif exists (select 1 from auth.refresh_tokens t where t.token_hash = p_hash and t.session_id = p_session) then
      -- A token issued before 0034 that is no longer live: reuse.
      delete from auth.sessions where id = p_session;
      return query select 'reuse_detected', null::integer, null::json, null::json;
      return;
    else
      -- Perhaps an older token of this session; the caller derives forward (auth.refresh_token_reused).
      return query select 'unknown', null::integer, null::json, null::json;
      return;
    end if;
  elsif v_rotated_at < now() - make_interval(secs => p_ttl_seconds) then
    return query select 'expired', null::integer, null::json, null::json;
    return;
  end if;

  -- A refused grant changes nothing.
  if v_count_start = v_window_start and v_count >= p_max_per_window then
    return query select 'rate_limited',
      greatest(1, ceil(extract(epoch from v_window_start) + p_window_seconds - extract(epoch from now()))::integer),
      null::json, null::json;
    return;
  end if;
  if v_banned then
    return query select 'banned', null::integer, null::json, null::json;
    return;
  end if;

  if v_active = p_hash then
    -- Every refusal was ruled out above, so the first statement's conditions hold now: rotate.
    return query
      update auth.sessions s set
        refresh_parent_hash = s.refresh_token_hash, refresh_token_hash = p_child_hash,
        refresh_rotated_at = now(), refreshed_at = now(), updated_at = now(),
        refresh_window_start = v_window_start,
        refresh_count = case when v_count_start = v_window_start then v_count + 1 else 1 end
      where s.id = p_session
      returning 'rotated', null::integer,
        json_build_object('id', s.id, 'user_id', s.user_id, 'aal', s.aal, 'amr', s.amr),
        (select json_build_object('row', to_json(u), 'identities',
           (select json_agg(i order by i.created_at) from auth.identities i where i.user_id = u.id))
         from auth.users u where u.id = s.user_id);
    return;
  end if;

  -- The replayed parent: the same child, counted as a grant.
  return query
    update auth.sessions s set
      refresh_window_start = v_window_start,
      refresh_count = case when v_count_start = v_window_start then v_count + 1 else 1 end
    where s.id = p_session
    returning case when v_active = p_child_hash then 'replayed' else 'replayed_legacy' end, null::integer,
      json_build_object('id', s.id, 'user_id', s.user_id, 'aal', s.aal, 'amr', s.amr),
      (select json_build_object('row', to_json(u), 'identities',
         (select json_agg(i order by i.created_at) from auth.identities i where i.user_id = u.id))
       from auth.users u where u.id = s.user_id);
end
$$;
revoke all on function auth.refresh_grant(uuid, bytea, bytea, integer, integer, integer, integer, bytea) from public;

-- An older token of a session: its descendants' hashes (derived forward by the caller, a bounded
-- number of steps) meet the session's active token or its parent. Then it was issued and revoked,
-- so theft is assumed and the session ends. Returns whether it did.
create function auth.refresh_token_reused(p_session uuid, p_descendants bytea[])
returns boolean
language sql
set search_path = ''
as $$
  with ended as (
    delete from auth.sessions
    where id = p_session
      and (refresh_token_hash = any (p_descendants) or refresh_parent_hash = any (p_descendants))
    returning 1
  )
  select exists (select 1 from ended);
$$;
revoke all on function auth.refresh_token_reused(uuid, bytea[]) from public;
