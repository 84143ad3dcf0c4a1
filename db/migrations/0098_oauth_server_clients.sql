-- The clients of Tenantry's OAuth 2.1 authorization server (GoTrue's auth.oauth_clients): the
-- applications an operator registers through /admin/oauth/clients so that they may later ask users
-- for access. See docs/decisions/0092-oauth-server-clients.md.
--
-- A confidential client's secret is kept only as its SHA-256 digest: the secret is 32 random bytes,
-- so a slow password hash adds nothing, and the token endpoint compares digests in constant time.
-- A public client (PKCE only) has no secret. Deleting a client keeps its row with deleted_at set,
-- as GoTrue does, so its id is never handed out again and the audit log's target stays resolvable.

create table auth.oauth_clients (
  id uuid primary key default gen_random_uuid(),
  client_secret_hash bytea check (client_secret_hash is null or octet_length(client_secret_hash) = 32),
  registration_type text not null check (registration_type in ('manual', 'dynamic')),
  client_type text not null check (client_type in ('public', 'confidential')),
  token_endpoint_auth_method text not null
    check (token_endpoint_auth_method in ('none', 'client_secret_basic', 'client_secret_post')),
  redirect_uris text[] not null check (cardinality(redirect_uris) >= 1),
  grant_types text[] not null check (cardinality(grant_types) >= 1
    and grant_types <@ array['authorization_code', 'refresh_token']),
  client_name text check (client_name is null or char_length(client_name) <= 1024),
  client_uri text check (client_uri is null or char_length(client_uri) <= 2048),
  logo_uri text check (logo_uri is null or char_length(logo_uri) <= 2048),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz,
  -- a confidential client always has a secret, a public one never
  constraint oauth_clients_secret_by_type check ((client_type = 'confidential') = (client_secret_hash is not null)),
  constraint oauth_clients_method_by_type check ((client_type = 'public') = (token_endpoint_auth_method = 'none'))
);
create index oauth_clients_listing_idx on auth.oauth_clients (created_at desc, id) where deleted_at is null;

-- Only the identity service (service_role) reads or writes clients; the data API never shows them.
revoke all on auth.oauth_clients from anon, authenticated;
