-- The whole refresh grant in one call, so a grant costs one round trip and one durable commit
-- (docs/decisions/0018): the rotation of 0025 (same lock order, the session row first; the same
-- reuse interval and reuse detection), the per-session rate limit, and the user, read under the
-- session's lock. Nothing changes unless the grant succeeds, except that detected reuse ends the
-- session. The session and user rows come back whole, as JSON, so columns added to them later
-- reach the token response without changing this function.

-- A session counts its own refresh grants (the per-session limit, RATE_LIMIT_REFRESH_PER_SESSION)
-- in its row, which every grant updates anyway, instead of a row of internal.rate_limits: one
-- write less per grant. Same fixed windows as internal.rate_limits.
alter table auth.sessions
  add column refresh_window_start timestamptz,
  add column refresh_count integer not null default 0;

-- Refresh tokens by session, whole: a session's deletion (sign-out, reuse detected) cascades to
-- its tokens through this index instead of reading the table (the partial index of 0001 cannot
-- serve it), and revoking a token no longer changes an indexed column, so the revocation can be
-- a heap-only update; room for it is left on each page.
create index refresh_tokens_session_id_idx on auth.refresh_tokens (session_id);
drop index auth.refresh_tokens_session_idx;
alter table auth.refresh_tokens set (fillfactor = 80);
-- Few statements, each doing several things, since every statement of a PL/pgSQL function has a
-- cost of its own: lock the session through the token; read the token again (after the lock) with
-- its user; then one statement revokes the token, stores its child and counts the grant.
create function auth.refresh_grant(
  p_hash bytea,
  p_child_hash bytea,
  p_ttl_seconds integer,
  p_reuse_seconds integer,
  p_max_per_window integer,
  p_window_seconds integer
)
returns table (outcome text, retry_after integer, session json, "user" json)
language plpgsql
set search_path = ''
as $$
declare
  v_session uuid;
  v_count_start timestamptz;
  v_count integer;
  v_token_id bigint;
  v_user uuid;
  v_revoked boolean;
  v_expired boolean;
  v_changed_at timestamptz;
  v_user_row json;
  v_banned boolean;
  v_window_start timestamptz;
begin
  -- The session row first (the lock order of every rotation since 0001).
  select s.id, s.refresh_window_start, s.refresh_count into v_session, v_count_start, v_count
  from auth.sessions s
  where s.id = (select t.session_id from auth.refresh_tokens t where t.token_hash = p_hash)
  for update;
  if v_session is null then
    return query select 'not_found', null::integer, null::json, null::json;
    return;
  end if;

  -- A new statement after the lock: sees any rotation committed while we waited. The user row
  -- comes whole, as findUserById reads it (the password hash too, which is never rendered), with
  -- its identities.
  select t.id, t.revoked, t.updated_at < now() - make_interval(secs => p_ttl_seconds), t.user_id,
         t.updated_at, u.banned_until > now(),
         json_build_object('row', to_json(u), 'identities',
           (select json_agg(i order by i.created_at) from auth.identities i where i.user_id = u.id))
    into v_token_id, v_revoked, v_expired, v_user, v_changed_at, v_banned, v_user_row
  from auth.refresh_tokens t join auth.users u on u.id = t.user_id
  where t.token_hash = p_hash and t.session_id = v_session;
  if v_token_id is null then
    return query select 'not_found', null::integer, null::json, null::json;
    return;
  end if;

  if v_revoked then
    if not (v_changed_at >= now() - make_interval(secs => p_reuse_seconds)
            and exists (select 1 from auth.refresh_tokens c
                        where c.parent_id = v_token_id and c.token_hash = p_child_hash and not c.revoked)) then
      -- Reuse of a revoked token: theft is assumed, the whole session ends.
      delete from auth.sessions where id = v_session;
      return query select 'reuse_detected', null::integer, null::json, null::json;
      return;
    end if;
  elsif v_expired then
    return query select 'expired', null::integer, null::json, null::json;
    return;
  end if;

  -- The per-session limit: the session's lock serialises its grants, so reading the count
  -- first and counting only an accepted grant is exact. A refused grant changes nothing.
  v_window_start := to_timestamp(floor(extract(epoch from now()) / p_window_seconds) * p_window_seconds);
  if v_count_start is distinct from v_window_start then
    v_count := 0;
  end if;
  if v_count >= p_max_per_window then
    return query select 'rate_limited',
      greatest(1, ceil(extract(epoch from v_window_start) + p_window_seconds - extract(epoch from now()))::integer),
      null::json, null::json;
    return;
  end if;
  if v_banned then
    return query select 'banned', null::integer, null::json, null::json;
    return;
  end if;

  if v_revoked then
    -- A retry with the parent of the active token, within the reuse interval: the same child.
    return query
      update auth.sessions s set refresh_window_start = v_window_start, refresh_count = v_count + 1
      where s.id = v_session
      returning 'replayed', null::integer, to_json(s), v_user_row;
    return;
  end if;

  return query
    with revoked as (
      update auth.refresh_tokens set revoked = true, updated_at = now() where id = v_token_id
    ), child as (
      insert into auth.refresh_tokens (token_hash, session_id, user_id, parent_id)
      values (p_child_hash, v_session, v_user, v_token_id)
    )
    update auth.sessions s set refreshed_at = now(), updated_at = now(),
      refresh_window_start = v_window_start, refresh_count = v_count + 1
    where s.id = v_session
    returning 'rotated', null::integer, to_json(s), v_user_row;
end
$$;
revoke all on function auth.refresh_grant(bytea, bytea, integer, integer, integer, integer) from public;
