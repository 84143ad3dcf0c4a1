-- Rate limits count over a sliding window instead of fixed ones (docs/decisions/0032). With
-- fixed windows, a client could spend its whole allowance at the end of one window and again at
-- the start of the next: twice the limit within seconds. Now a window's count is joined by the
-- previous window's, weighted by how much of that window still lies within the last
-- window_seconds, the estimate Cloudflare and nginx-style limiters use. Still one row per bucket
-- and window in internal.rate_limits, so every instance shares the same counts.
--
-- A refused request is not counted: a client that keeps knocking is held to the limit, not
-- locked out for longer than the limit says, and Retry-After stays true.

-- Seconds until one more hit has room, given the previous window's hits, the current window's,
-- and the seconds elapsed in the current window. Either the previous window's weight fades enough
-- within this window, or, when this window is already full, the count waits for the next one
-- and for this window's own weight to fade there.
create function internal.rate_limit_wait(
  p_previous integer,
  p_current integer,
  p_max integer,
  p_window integer,
  p_elapsed double precision
) returns integer
language sql
immutable
set search_path = ''
as $$
  select greatest(1, ceil(case
    when p_current + 1 <= p_max and p_previous > 0
      then (1 - (p_max - p_current - 1)::double precision / p_previous) * p_window - p_elapsed
    else p_window - p_elapsed
      + greatest(0, 1 - (p_max - 1)::double precision / greatest(p_current, 1)) * p_window
  end))::integer
$$;

-- Whether a bucket has room for one more hit, counting nothing: null when it has, otherwise the
-- seconds to wait. For limits on failures, checked first and counted (rate_limit_count) only
-- when the attempt fails; and the wait of a hit rate_limit_admit refuses.
create function internal.rate_limit_room(p_bucket text, p_window integer, p_max integer)
returns integer
language plpgsql
stable
set search_path = ''
as $$
declare
  v_now double precision := extract(epoch from now());
  v_start timestamptz := to_timestamp(floor(v_now / p_window) * p_window);
  v_elapsed double precision := v_now - extract(epoch from v_start);
  v_previous integer;
  v_current integer;
begin
  select coalesce(max(r.hits) filter (where r.window_start < v_start), 0),
         coalesce(max(r.hits) filter (where r.window_start = v_start), 0)
    into v_previous, v_current
  from internal.rate_limits r
  where r.bucket = p_bucket
    and r.window_start in (v_start - make_interval(secs => p_window), v_start);
  if v_previous * (1 - v_elapsed / p_window) + v_current + 1 <= p_max then
    return null;
  end if;
  return internal.rate_limit_wait(v_previous, v_current, p_max, p_window, v_elapsed);
end
$$;

-- One hit against a bucket: null when it had room and has been counted; otherwise the seconds to
-- wait, with nothing counted. The window's row lock (ON CONFLICT ... WHERE sees the latest count)
-- keeps concurrent hits of one bucket from slipping past the limit together.
create function internal.rate_limit_admit(p_bucket text, p_window integer, p_max integer)
returns integer
language plpgsql
set search_path = ''
as $$
declare
  v_now double precision := extract(epoch from now());
  v_start timestamptz := to_timestamp(floor(v_now / p_window) * p_window);
  v_carried double precision;
begin
  -- The previous window's hits, weighted by the share of it still within the last p_window.
  select coalesce(max(r.hits), 0) * (1 - (v_now - extract(epoch from v_start)) / p_window)
    into v_carried
  from internal.rate_limits r
  where r.bucket = p_bucket and r.window_start = v_start - make_interval(secs => p_window);

  insert into internal.rate_limits as r (bucket, window_start, hits)
  select p_bucket, v_start, 1
  where v_carried + 1 <= p_max
  on conflict (bucket, window_start) do update set hits = r.hits + 1
  where v_carried + r.hits + 1 <= p_max;
  if found then
    return null;
  end if;
  -- Refused. Counts only grow and now() is the transaction's, so the room check (reading the
  -- same windows) finds no room either and says how long to wait.
  return coalesce(internal.rate_limit_room(p_bucket, p_window, p_max), 1);
end
$$;

-- One hit counted, whatever the count: a failure that has already happened.
create function internal.rate_limit_count(p_bucket text, p_window integer)
returns void
language sql
set search_path = ''
as $$
  insert into internal.rate_limits as r (bucket, window_start, hits)
  values (p_bucket, to_timestamp(floor(extract(epoch from now()) / p_window) * p_window), 1)
  on conflict (bucket, window_start) do update set hits = r.hits + 1
$$;

revoke all on function internal.rate_limit_wait(integer, integer, integer, integer, double precision) from public;
revoke all on function internal.rate_limit_admit(text, integer, integer) from public;
revoke all on function internal.rate_limit_room(text, integer, integer) from public;
revoke all on function internal.rate_limit_count(text, integer) from public;

-- The password grant's per-address limit through the same sliding window; the rest of the
-- pre-check is as in 0025.
create or replace function internal.begin_password_sign_in(
  p_email text,
  p_address text,
  p_window integer,
  p_max_per_address integer,
  p_free_failures integer,
  p_failures_per_email integer,
  p_backoff integer,
  p_backoff_max integer,
  p_memory integer
) returns integer
language plpgsql
set search_path = ''
as $$
declare
  v_wait integer;
  v_failures integer;
  v_blocked timestamptz;
  v_email_failures integer;
  v_free integer;
  v_forget timestamptz := now() - make_interval(secs => p_memory);
begin
  if p_address <> '' then
    v_wait := internal.rate_limit_admit('signin:ip:' || p_address, p_window, p_max_per_address);
    if v_wait is not null then
      return v_wait;
    end if;
  end if;

  -- The row lock taken here serialises concurrent attempts of one address for one e-mail.
  -- A waiting address is refused without counting anything.
  insert into internal.sign_in_failures as f (email, address, failures, last_attempt_at)
  values (p_email, p_address, 1, now())
  on conflict (email, address) do update set
    failures = case
      when f.blocked_until > now() then f.failures
      when f.last_attempt_at < v_forget then 1
      else f.failures + 1 end,
    last_attempt_at = case when f.blocked_until > now() then f.last_attempt_at else now() end
  returning f.failures, f.blocked_until into v_failures, v_blocked;
  if v_blocked > now() then
    return greatest(1, ceil(extract(epoch from v_blocked - now()))::integer);
  end if;

  insert into internal.sign_in_failures as f (email, address, failures, last_attempt_at)
  values (p_email, '*', 1, now())
  on conflict (email, address) do update set
    failures = case when f.last_attempt_at < v_forget then 1 else f.failures + 1 end,
    last_attempt_at = now()
  returning f.failures into v_email_failures;

  -- Once an e-mail has many failures from everywhere, every address waits after each failure:
  -- guesses slow down, yet an address without failures (the owner's) still gets its attempt.
  v_free := case when v_email_failures >= p_failures_per_email then 1 else p_free_failures end;
  if v_failures >= v_free then
    update internal.sign_in_failures f
    set blocked_until = now() + make_interval(secs => least(
      p_backoff_max::double precision,
      p_backoff * power(2::double precision, least(v_failures - v_free, 30))))
    where f.email = p_email and f.address = p_address;
  end if;

  -- Forgotten rows are useless; prune them now and then rather than on every attempt.
  if random() < 0.01 then
    delete from internal.sign_in_failures f
    where f.last_attempt_at < v_forget and (f.blocked_until is null or f.blocked_until < now());
  end if;
  return null;
end
$$;

-- A session's refresh grants (RATE_LIMIT_REFRESH_PER_SESSION) count in the same sliding window,
-- still in the session row (0026): beside the current window's count, the row keeps the count of
-- the window before it. The grant is otherwise as in 0034.
alter table auth.sessions add column refresh_previous_count integer not null default 0;

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
      (select json_build_object('row', to_json(u), 'identities',
         (select json_agg(i order by i.created_at) from auth.identities i where i.user_id = u.id))
       from auth.users u where u.id = s.user_id);
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
        (select json_build_object('row', to_json(u), 'identities',
           (select json_agg(i order by i.created_at) from auth.identities i where i.user_id = u.id))
         from auth.users u where u.id = s.user_id);
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
      (select json_build_object('row', to_json(u), 'identities',
         (select json_agg(i order by i.created_at) from auth.identities i where i.user_id = u.id))
       from auth.users u where u.id = s.user_id);
end
$$;
