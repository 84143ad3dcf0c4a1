-- A refresh grant answers the user with its second factors, as the other grants do.
--
-- GoTrue loads a user with its identities and factors for every grant, and supabase-js reads
-- session.user.factors to tell whether a second factor is due (getAuthenticatorAssuranceLevel's
-- nextLevel). The refresh grant answered the user without them, so after a refresh an aal1
-- session of a user with a verified factor looked as if none were due.
--
-- The factors' JSON gets one definition here. Every statement that reads a user uses it
-- (SELECT_USER in src/server/identity/users.ts), and so does the refresh grant's statement, which
-- reads it beside auth.refresh_grant's result (sessions.ts): the grant itself is unchanged.

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

revoke all on function auth.user_factors_json(uuid) from public;
