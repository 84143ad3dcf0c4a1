-- Phone sign-in and phone second factors, GoTrue's shape (docs/decisions/0086-phone-sign-in.md):
-- a user's phone is proved by an SMS code (phone_confirmed_at), a phone change waits in
-- phone_change until the new number's code comes back, the codes live in auth.one_time_tokens
-- like the e-mail ones (hashed, expiring, single use), and a phone factor keeps its number and
-- its challenges the hash of the code they sent.
--
-- Numbers are stored as GoTrue stores them: E.164 digits without the leading +.

alter table auth.users
  add column phone_confirmed_at timestamptz,
  add column phone_change text not null default '',
  add column phone_change_sent_at timestamptz;

alter table auth.one_time_tokens drop constraint one_time_tokens_token_type_check;
alter table auth.one_time_tokens
  add constraint one_time_tokens_token_type_check check (token_type in (
    'confirmation_token', 'reauthentication_token', 'recovery_token',
    'email_change_token_new', 'email_change_token_current', 'phone_change_token'));

-- Phone factors: the number the challenge codes go to. GoTrue refuses a second verified factor
-- with the same number for one user (phone_factor_exists... its unique index).
alter table auth.mfa_factors drop constraint mfa_factors_factor_type_check;
alter table auth.mfa_factors
  add constraint mfa_factors_factor_type_check check (factor_type in ('totp', 'webauthn', 'phone')),
  add column phone text check (phone is null or phone ~ '^[1-9][0-9]{1,14}$'),
  add constraint mfa_factors_phone_number check (factor_type <> 'phone' or phone is not null);
create unique index mfa_factors_user_phone_verified_key on auth.mfa_factors (user_id, phone)
  where factor_type = 'phone' and status = 'verified';

-- A phone factor's challenge keeps the HMAC of the code it sent (never the code), the channel,
-- and how many wrong codes it has taken.
alter table auth.mfa_challenges
  add column otp_code bytea,
  add column channel text check (channel in ('sms', 'whatsapp')),
  add column failed_attempts integer not null default 0;

-- The development outbox for text messages (local mode without a provider): what would have
-- been sent, for the development mailbox page. Production never writes here.
create table internal.sms_outbox (
  id bigserial primary key,
  phone text not null,
  channel text not null default 'sms',
  body text not null,
  created_at timestamptz not null default now()
);
create index sms_outbox_created_idx on internal.sms_outbox (created_at desc);
revoke all on internal.sms_outbox from public;

-- The factors' JSON gains the number of a phone factor, as GoTrue lists it (others unchanged).
create or replace function auth.user_factors_json(p_user uuid)
returns json
language sql stable
set search_path = ''
as $$
  select coalesce(json_agg((jsonb_build_object('id', f.id,
    'friendly_name', coalesce(f.friendly_name, ''), 'factor_type', f.factor_type, 'status', f.status,
    'created_at', f.created_at, 'updated_at', f.updated_at, 'last_challenged_at', f.last_challenged_at)
    || case when f.phone is null then '{}'::jsonb else jsonb_build_object('phone', f.phone) end)::json
    order by f.created_at, f.id), '[]')
  from auth.mfa_factors f
  where f.user_id = p_user
$$;
