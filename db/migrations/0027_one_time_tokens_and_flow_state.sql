-- The e-mail identity lifecycle (confirmation, recovery and magic links, e-mail change,
-- reauthentication) as GoTrue serves it: one-time tokens, PKCE flow states, the per-address
-- e-mail frequency, and the user columns GoTrue reports for these flows. Token values are never
-- stored (docs/decisions/0011 and 0012).

-- What GoTrue's user object reports about pending e-mail actions. email_change is the address
-- waiting to be confirmed (new_email in the JSON); the current address stays in force until then.
alter table auth.users
  add column recovery_sent_at timestamptz,
  add column email_change text check (email_change = lower(email_change)),
  add column email_change_sent_at timestamptz,
  -- 0: no side confirmed yet; 1: one side of a secure e-mail change confirmed, the other pending.
  add column email_change_confirm_status smallint not null default 0
    check (email_change_confirm_status in (0, 1)),
  add column reauthentication_sent_at timestamptz;

-- A PKCE flow (RFC 7636) started by a client that keeps the code verifier: the e-mail link's
-- verification issues an authorization code, and only the holder of the verifier exchanges it
-- for a session (POST /token?grant_type=pkce). The code is kept as its SHA-256 only, issued
-- when the link is followed, and used once (the row is deleted by the exchange).
create table auth.flow_state (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references auth.users (id) on delete cascade,
  code_challenge text not null check (length(code_challenge) between 43 and 128),
  code_challenge_method text not null check (code_challenge_method in ('s256', 'plain')),
  -- the amr method of the session the exchange opens: email/signup, recovery, magiclink, invite, email_change
  authentication_method text not null,
  provider_type text not null default 'email',
  auth_code_hash bytea unique,
  auth_code_issued_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((auth_code_hash is null) = (auth_code_issued_at is null))
);
create index flow_state_user_idx on auth.flow_state (user_id);
create index flow_state_created_idx on auth.flow_state (created_at);

-- One-time tokens sent by e-mail. Per user and type only the latest exists (a new one replaces
-- it), so only the latest link or code works. The link token is kept as its SHA-256; the e-mail
-- code as an HMAC under a server key (six digits would otherwise be reversed from a copy of the
-- table in a second). relates_to is the address the token was sent to. A code that failed too
-- often stops working; the link of the same e-mail still does.
create table auth.one_time_tokens (
  id uuid primary key,
  user_id uuid not null references auth.users (id) on delete cascade,
  token_type text not null check (token_type in (
    'confirmation_token', 'reauthentication_token', 'recovery_token',
    'email_change_token_new', 'email_change_token_current')),
  token_hash bytea not null unique,
  otp_hash bytea not null,
  relates_to text not null check (relates_to = lower(relates_to)),
  -- set when the token was issued for a PKCE flow: following its link issues that flow's code
  flow_state_id uuid references auth.flow_state (id) on delete cascade,
  failed_attempts integer not null default 0,
  expires_at timestamptz not null,
  created_at timestamptz not null default now(),
  unique (user_id, token_type)
);
create index one_time_tokens_relates_to_idx on auth.one_time_tokens (relates_to, token_type);
create index one_time_tokens_flow_state_idx on auth.one_time_tokens (flow_state_id)
  where flow_state_id is not null;
create index one_time_tokens_expires_idx on auth.one_time_tokens (expires_at);

revoke all on auth.flow_state, auth.one_time_tokens from anon, authenticated;

-- When an e-mail of one kind last went to one address: GoTrue's per-address frequency
-- (SMTP_MAX_FREQUENCY). Keyed by a hash of kind and address, whether or not an account exists,
-- so the answer to a repeated request never tells whether the address is registered, and the
-- addresses strangers type are not kept in clear.
create table internal.mail_frequency (
  key bytea primary key,
  sent_at timestamptz not null
);
create index mail_frequency_sent_idx on internal.mail_frequency (sent_at);

-- Claims the right to send one e-mail for p_key: 0 when granted (and recorded), otherwise the
-- whole seconds left before the next one may go.
create function internal.claim_mail_slot(p_key bytea, p_seconds integer) returns integer
language plpgsql
set search_path = ''
as $$
declare
  v_sent timestamptz;
begin
  insert into internal.mail_frequency as f (key, sent_at) values (p_key, now())
  on conflict (key) do update set sent_at = now()
    where f.sent_at <= now() - make_interval(secs => p_seconds);
  if found then
    return 0;
  end if;
  select f.sent_at into v_sent from internal.mail_frequency f where f.key = p_key;
  return greatest(1, ceil(extract(epoch from v_sent + make_interval(secs => p_seconds) - now()))::integer);
end
$$;
revoke all on function internal.claim_mail_slot(bytea, integer) from public;
