-- A refresh grant answers the user with its second factors, as the other grants do.
--
-- GoTrue loads a user with its identities and factors for every grant, and supabase-js reads
-- session.user.factors to tell whether a second factor is due (getAuthenticatorAssuranceLevel's
-- nextLevel). The refresh grant answered the user without them, so after a refresh an aal1
-- session of a user with a verified factor looked as if none were due.
--
-- The factors' JSON gets one definition here, used by every statement that reads a user (the
-- sign-in's and the lookups' SELECT_USER in src/server/identity/users.ts) and by the refresh
-- grant's user, which is now auth.user_json. The grant is otherwise as in 0038.

-- A user's second factors in GoTrue's JSON shape, oldest first; '[]' when there are none.
create function auth.user_factors_json(p_user uuid)
returns json
language sql stable
set search_path = ''
as $$
  select coalesce(json_agg(json_build_object('id', f.id,
    'friendly_name', coalesce(f.friendly_name, ''), 'factor_type', f.factor_type, 'status', f.status,
    'created_at', f.created_at, 'updated_at', f.updated_at, 'last_challenged_at', f.last_challenged_at)
    order by f.created_at, f.id), '[]')
  from auth.mfa_factors f
  where f.user_id = p_user
$$;

-- A user as the refresh grant answers it: the whole row (so columns added later flow through),
-- its identities and its factors.
create function auth.user_json(p_user uuid)
returns json
language sql stable
set search_path = ''
as $$
  select json_build_object('row', to_json(u),
    'identities', (select json_agg(i order by i.created_at) from auth.identities i where i.user_id = u.id),
    'factors', auth.user_factors_json(u.id))
  from auth.users u
  where u.id = p_user
$$;

revoke all on function auth.user_factors_json(uuid) from public;
revoke all on function auth.user_json(uuid) from public;

create or replace function auth.refresh_grant(
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
  v_now double precision := extract(epoch from now());
  v_window_start timestamptz := to_timestamp(floor(v_now / p_window_seconds) * p_window_seconds);
  v_previous_start timestamptz := v_window_start - make_interval(secs => p_window_seconds);
  v_elapsed double precision := v_now - extract(epoch from v_window_start);
  -- the share of the previous window that still lies within the last p_window_seconds
  v_weight double precision := 1 - v_elapsed / p_window_seconds;
  v_previous_count integer;
  v_current integer;
  v_previous integer;
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
      refresh_previous_count = case
        when s.refresh_window_start = v_window_start then s.refresh_previous_count
        when s.refresh_window_start = v_previous_start then s.refresh_count
        else 0 end,
      refresh_count = case when s.refresh_window_start = v_window_start then s.refresh_count + 1 else 1 end
    where s.id = p_session
      and s.refresh_token_hash = p_hash
      and s.refresh_rotated_at >= now() - make_interval(secs => p_ttl_seconds)
      and case
        when s.refresh_window_start = v_window_start
          then s.refresh_previous_count * v_weight + s.refresh_count + 1
        when s.refresh_window_start = v_previous_start then s.refresh_count * v_weight + 1
        else 1 end <= p_max_per_window
      and not exists (select 1 from auth.users b where b.id = s.user_id and b.banned_until > now())
    returning 'rotated', null::integer,
      json_build_object('id', s.id, 'user_id', s.user_id, 'aal', s.aal, 'amr', s.amr),
      auth.user_json(s.user_id);
  if found then
    return;
  end if;

  -- Not the common case: lock the session and look again (a rotation committed meanwhile is seen).
  select s.refresh_token_hash, s.refresh_parent_hash, s.refresh_rotated_at, s.refresh_window_start,
         s.refresh_count, s.refresh_previous_count, s.user_id, coalesce(u.banned_until > now(), false)
    into v_active, v_parent, v_rotated_at, v_count_start, v_count, v_previous_count, v_user, v_banned
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

  -- The grants counted in this window and in the one before it.
  v_current := case when v_count_start = v_window_start then v_count else 0 end;
  v_previous := case
    when v_count_start = v_window_start then v_previous_count
    when v_count_start = v_previous_start then v_count
    else 0 end;
  -- A refused grant changes nothing.
  if v_previous * v_weight + v_current + 1 > p_max_per_window then
    return query select 'rate_limited',
      internal.rate_limit_wait(v_previous, v_current, p_max_per_window, p_window_seconds, v_elapsed),
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
        refresh_previous_count = v_previous, refresh_count = v_current + 1
      where s.id = p_session
      returning 'rotated', null::integer,
        json_build_object('id', s.id, 'user_id', s.user_id, 'aal', s.aal, 'amr', s.amr),
        auth.user_json(s.user_id);
    return;
  end if;

  -- The replayed parent: the same child, counted as a grant.
  return query
    update auth.sessions s set
      refresh_window_start = v_window_start,
      refresh_previous_count = v_previous, refresh_count = v_current + 1
    where s.id = p_session
    returning case when v_active = p_child_hash then 'replayed' else 'replayed_legacy' end, null::integer,
      json_build_object('id', s.id, 'user_id', s.user_id, 'aal', s.aal, 'amr', s.amr),
      auth.user_json(s.user_id);
end
$$;
