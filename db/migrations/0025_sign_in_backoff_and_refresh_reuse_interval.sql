-- A refresh token's parent is honoured only within a short reuse interval; after it, presenting
-- the parent is reuse and ends the session.

-- The refresh rotation of 0001 with a reuse interval: a retry with the parent of the active token
-- gets that same child only within p_reuse_seconds of the parent's rotation (the parent's
-- updated_at is its revocation time); later, like any other reuse of a revoked token, it ends
-- the session. Still one round trip, with the same lock order (the session row first).
drop function auth.rotate_refresh_token(bytea, bytea, integer);

create function auth.rotate_refresh_token(
  p_hash bytea,
  p_child_hash bytea,
  p_ttl_seconds integer,
  p_reuse_seconds integer
)
returns table (outcome text, session_id uuid, user_id uuid, aal text, amr jsonb)
language plpgsql
set search_path = ''
as $$
declare
  v_token_id bigint;
  v_session uuid;
  v_user uuid;
  v_revoked boolean;
  v_expired boolean;
  v_changed_at timestamptz;
begin
  select t.id, t.session_id into v_token_id, v_session
  from auth.refresh_tokens t where t.token_hash = p_hash;
  if v_token_id is null then
    return query select 'not_found', null::uuid, null::uuid, null::text, null::jsonb;
    return;
  end if;

  perform 1 from auth.sessions s where s.id = v_session for update;
  if not found then
    return query select 'not_found', null::uuid, null::uuid, null::text, null::jsonb;
    return;
  end if;

  -- A new statement after the lock: sees any rotation committed while we waited.
  select t.revoked, t.updated_at < now() - make_interval(secs => p_ttl_seconds), t.user_id, t.updated_at
    into v_revoked, v_expired, v_user, v_changed_at
  from auth.refresh_tokens t where t.id = v_token_id;
  if v_revoked is null then
    return query select 'not_found', null::uuid, null::uuid, null::text, null::jsonb;
    return;
  end if;

  if not v_revoked then
    if v_expired then
      return query select 'expired', v_session, v_user, null::text, null::jsonb;
      return;
    end if;
    update auth.refresh_tokens set revoked = true, updated_at = now() where id = v_token_id;
    insert into auth.refresh_tokens (token_hash, session_id, user_id, parent_id)
      values (p_child_hash, v_session, v_user, v_token_id);
    update auth.sessions set refreshed_at = now(), updated_at = now() where id = v_session;
    return query select 'rotated', s.id, v_user, s.aal, s.amr from auth.sessions s where s.id = v_session;
    return;
  end if;

  if v_changed_at >= now() - make_interval(secs => p_reuse_seconds)
     and exists (select 1 from auth.refresh_tokens c
                 where c.parent_id = v_token_id and c.token_hash = p_child_hash and not c.revoked) then
    return query select 'replayed', s.id, v_user, s.aal, s.amr from auth.sessions s where s.id = v_session;
    return;
  end if;

  delete from auth.sessions where id = v_session;
  return query select 'reuse_detected', v_session, v_user, null::text, null::jsonb;
end
$$;
revoke all on function auth.rotate_refresh_token(bytea, bytea, integer, integer) from public;
