-- Password guessing is slowed by failures, per e-mail and client address, with exponential
-- backoff, so a stranger can no longer lock an owner out by failing sign-ins for their e-mail
-- (docs/decisions/0009). And a refresh token's parent is honoured only within a short reuse
-- interval; after it, presenting the parent is reuse and ends the session.

-- Failed password sign-ins. One row per (e-mail, client address), plus one row per e-mail with
-- address '*' counting every address together. An attempt is counted when it starts and the
-- count is cleared (per address) or taken back (per e-mail) when the password proves right, so
-- what remains are failures, and concurrent guesses cannot slip past the backoff.
create table internal.sign_in_failures (
  email text not null,
  address text not null,
  failures integer not null,
  blocked_until timestamptz,
  last_attempt_at timestamptz not null,
  primary key (email, address)
);

-- The whole pre-check of a password grant, in one call: the per-address attempt limit (fixed
-- windows in internal.rate_limits), then the backoff of this address for this e-mail. Returns
-- null when the attempt may go ahead (and has been counted), otherwise the seconds to wait.
-- p_address is the client address ('' when unknown). Failures are forgotten p_memory seconds
-- after the last attempt.
create function internal.begin_password_sign_in(
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
  v_hits integer;
  v_window_start timestamptz;
  v_failures integer;
  v_blocked timestamptz;
  v_email_failures integer;
  v_free integer;
  v_forget timestamptz := now() - make_interval(secs => p_memory);
begin
  if p_address <> '' then
    insert into internal.rate_limits as r (bucket, window_start, hits)
    values ('signin:ip:' || p_address,
            to_timestamp(floor(extract(epoch from now()) / p_window) * p_window), 1)
    on conflict (bucket, window_start) do update set hits = r.hits + 1
    returning r.hits, r.window_start into v_hits, v_window_start;
    if v_hits > p_max_per_address then
      return greatest(1, ceil(extract(epoch from v_window_start) + p_window - extract(epoch from now()))::integer);
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

-- The password was right: this address's failures for the e-mail are cleared, and the attempt is
-- taken back from the e-mail's count across addresses (the other addresses' failures remain).
create function internal.password_sign_in_succeeded(p_email text, p_address text) returns void
language sql
set search_path = ''
as $$
  delete from internal.sign_in_failures where email = p_email and address = p_address;
  update internal.sign_in_failures set failures = greatest(failures - 1, 0)
  where email = p_email and address = '*';
$$;

revoke all on function internal.begin_password_sign_in(text, text, integer, integer, integer, integer,
  integer, integer, integer) from public;
revoke all on function internal.password_sign_in_succeeded(text, text) from public;

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
