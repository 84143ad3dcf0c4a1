-- The OAuth 2.1 server's authorization code flow (decision 0093): a client's authorization request
-- waiting for the user's answer, the code it turns into, the user's standing consent per client,
-- and the sessions a client holds for a user.
--
-- An authorization lives ten minutes from the request. Approving it sets a one-time code, kept only
-- as its SHA-256 digest (32 random bytes: nothing to brute-force, so a fast digest is enough); the
-- code is bound to the client, the redirect URI, the user and the PKCE challenge, and lives five
-- minutes. Exchanging it records the session it opened, so a second exchange can end that session
-- (OAuth 2.1: a code used twice revokes what it issued).

create table auth.oauth_authorizations (
  id uuid primary key default gen_random_uuid(),
  client_id uuid not null references auth.oauth_clients (id),
  -- set when a signed-in user first looks at the request: from then on only they may answer it
  user_id uuid references auth.users (id) on delete cascade,
  redirect_uri text not null check (char_length(redirect_uri) <= 2048),
  scope text not null check (char_length(scope) <= 1024),
  state text check (state is null or char_length(state) <= 1024),
  -- S256 only (plain is refused, as OAuth 2.1 requires)
  code_challenge text not null check (code_challenge ~ '^[A-Za-z0-9._~-]{43,128}$'),
  status text not null default 'pending' check (status in ('pending', 'approved', 'denied')),
  code_hash bytea unique check (code_hash is null or octet_length(code_hash) = 32),
  code_expires_at timestamptz,
  code_used_at timestamptz,
  -- the session the code opened, ended if the code is presented again
  session_id uuid,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null,
  decided_at timestamptz,
  constraint oauth_authorizations_code_when_approved check ((code_hash is not null) = (status = 'approved'))
);
create index oauth_authorizations_expiry_idx on auth.oauth_authorizations (expires_at);
create index oauth_authorizations_user_idx on auth.oauth_authorizations (user_id) where user_id is not null;
create index oauth_authorizations_client_idx on auth.oauth_authorizations (client_id);

-- A user's standing consent to a client (GoTrue's oauth_consents): one row per user and client,
-- its scopes widened by each approval, revoked_at set when the user disconnects the client. A
-- later approval brings the same row back with the new scopes.
create table auth.oauth_consents (
  user_id uuid not null references auth.users (id) on delete cascade,
  client_id uuid not null references auth.oauth_clients (id),
  scopes text[] not null check (cardinality(scopes) <= 64),
  granted_at timestamptz not null default now(),
  revoked_at timestamptz,
  primary key (user_id, client_id)
);
create index oauth_consents_client_idx on auth.oauth_consents (client_id);

-- A session opened by a client's code exchange names the client (GoTrue's sessions.oauth_client_id):
-- revoking the grant ends exactly these sessions, and their access tokens carry client_id.
alter table auth.sessions add column if not exists oauth_client_id uuid references auth.oauth_clients (id);
-- The client leads, so deleting a client finds its sessions through the index as well.
create index if not exists sessions_oauth_client_idx on auth.sessions (oauth_client_id, user_id)
  where oauth_client_id is not null;

-- Only the identity service (service_role) reads or writes these; the data API never shows them.
revoke all on auth.oauth_authorizations from anon, authenticated;
revoke all on auth.oauth_consents from anon, authenticated;

comment on table auth.oauth_authorizations is
  'OAuth 2.1 authorization requests and their one-time codes (digests only); decision 0093.';
comment on table auth.oauth_consents is
  'Each user''s standing consent to an OAuth client, with its scopes; decision 0093.';
comment on column auth.sessions.oauth_client_id is
  'The OAuth client this session was issued to by the authorization code flow; null for sign-ins.';
