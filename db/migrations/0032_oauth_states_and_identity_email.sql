-- Sign-in with OAuth/OIDC providers: the state of each authorization sent to a provider, and the
-- e-mail column GoTrue's identities carry.

-- One row per authorization sent to a provider, consumed (deleted) by its callback: the state
-- parameter is kept only as its SHA-256, so a copy of the table cannot complete a flow. It holds
-- the provider-side PKCE verifier and nonce, where the browser goes afterwards, the client's own
-- PKCE challenge (when it uses the PKCE flow), and the signed-in user who asked to link an
-- identity. Rows older than the state lifetime are useless and pruned.
create table auth.oauth_states (
  state_hash bytea primary key,
  provider text not null,
  code_verifier text not null,
  nonce text not null,
  redirect_to text not null,
  code_challenge text check (length(code_challenge) between 43 and 128),
  code_challenge_method text check (code_challenge_method in ('s256', 'plain')),
  linking_user_id uuid references auth.users (id) on delete cascade,
  created_at timestamptz not null default now(),
  check ((code_challenge is null) = (code_challenge_method is null))
);
create index oauth_states_created_idx on auth.oauth_states (created_at);
revoke all on auth.oauth_states from anon, authenticated;

-- GoTrue's identities.email: the identity's address as the provider gave it, lower-cased.
alter table auth.identities
  add column email text generated always as (lower(identity_data ->> 'email')) stored;
create index identities_email_idx on auth.identities (email);
