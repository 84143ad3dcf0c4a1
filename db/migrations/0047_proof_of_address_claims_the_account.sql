-- Whoever first proves an account's address gets the account clean
-- (docs/decisions/0041-identity-flows-belong-to-whoever-proves-them.md).
--
-- Without autoconfirm anyone may sign up with any address: the account waits, unconfirmed, for
-- its address to be proved. A stranger who signed up with someone else's address set its password
-- and its profile; when the owner later signed up too, or asked for a sign-in link, and followed
-- the e-mail, the stranger's password kept signing in. An e-mailed link or code, or a provider that
-- vouches for the address, is the first proof anyone gives of owning the address; what an unproven
-- creator set up goes at that moment, and what the proving flow itself asked for stays.
--
-- What the proving flow asked for travels with its one-time token: the password of the sign-up
-- that sent the e-mail (none for a sign-in link, a recovery or an invitation) and the profile data
-- it was given. The token is the only thing that ties a request to the e-mail it caused, so only
-- the password of the sign-up whose e-mail was followed is kept.

alter table auth.one_time_tokens
  add column password_hash text,
  add column user_metadata jsonb check (user_metadata is null or jsonb_typeof(user_metadata) = 'object');

comment on column auth.one_time_tokens.password_hash is
  'the password the flow that sent this token chose, set on an unconfirmed account when the token proves its address';
comment on column auth.one_time_tokens.user_metadata is
  'the profile data the flow that sent this token was given, the metadata of an unconfirmed account its proof claims';

-- Clears an account nobody proved to own, for the person proving its address now: the password
-- and profile data become the proving flow's (p_password_hash, p_user_metadata; null and {} when
-- it set none), and every session, factor, identity (but the address's e-mail identity when
-- p_keep_email_identity), pending e-mail change, one-time token, PKCE flow (but p_keep_flow_state,
-- the one the proof completes) and linking in progress goes. False, with nothing changed, when the
-- address was already proved: a proof for a confirmed account is an ordinary sign-in.
--
-- No definer rights: only the identity service, which owns the auth tables, claims accounts.
create function auth.claim_unproven_account(
  p_user_id uuid,
  p_password_hash text,
  p_user_metadata jsonb,
  p_keep_email_identity boolean,
  p_keep_flow_state uuid
) returns boolean
language plpgsql set search_path = ''
as $$
declare
  v_email text;
  v_metadata jsonb := coalesce(p_user_metadata, '{}'::jsonb);
begin
  update auth.users set
    encrypted_password = p_password_hash,
    raw_user_meta_data = v_metadata,
    email_change = null,
    email_change_confirm_status = 0,
    email_change_sent_at = null,
    updated_at = now()
  where id = p_user_id and email_confirmed_at is null
  returning email into v_email;
  if not found then
    return false;
  end if;

  delete from auth.identities
  where user_id = p_user_id and not (p_keep_email_identity and provider = 'email');
  update auth.identities set
    identity_data = jsonb_build_object('sub', provider_id, 'email', v_email,
                                       'email_verified', false, 'phone_verified', false),
    updated_at = now()
  where user_id = p_user_id and provider = 'email';
  update auth.users u set raw_app_meta_data = u.raw_app_meta_data || jsonb_build_object(
    'providers', coalesce((select jsonb_agg(distinct i.provider) from auth.identities i
                           where i.user_id = u.id), '[]'::jsonb))
  where u.id = p_user_id;

  -- Sessions take their refresh tokens with them (on delete cascade), factors their challenges.
  delete from auth.sessions where user_id = p_user_id;
  delete from auth.mfa_factors where user_id = p_user_id;
  delete from auth.mfa_recovery_codes where user_id = p_user_id;
  delete from auth.one_time_tokens where user_id = p_user_id;
  delete from auth.flow_state where user_id = p_user_id and id is distinct from p_keep_flow_state;
  delete from auth.oauth_states where linking_user_id = p_user_id;

  -- The profile was filled from the creator's sign-up data (internal.on_user_created).
  update public.profiles set
    display_name = nullif(left(coalesce(v_metadata ->> 'display_name', v_metadata ->> 'full_name', ''), 100), ''),
    avatar_url = null
  where id = p_user_id;
  return true;
end
$$;

revoke execute on function auth.claim_unproven_account(uuid, text, jsonb, boolean, uuid) from public;
