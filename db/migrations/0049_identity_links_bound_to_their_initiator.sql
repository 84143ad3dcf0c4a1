-- Linking a provider identity completes only for the browser that started it
-- (docs/decisions/0041-identity-flows-belong-to-whoever-proves-them.md).
--
-- A signed-in user's /user/identities/authorize answered a provider URL that anyone could open:
-- whoever signed in at the provider through it had their identity joined to the account that
-- asked. Now a PKCE link is written only at the code exchange, with the initiator's verifier; the
-- provider's word waits in the flow state until then. A link without PKCE is bound to a secret
-- cookie set on the authorize answer, kept here as its SHA-256 and checked at the callback.

alter table auth.flow_state
  add column pending_identity jsonb check (pending_identity is null or jsonb_typeof(pending_identity) = 'object');

comment on column auth.flow_state.pending_identity is
  'the provider identity a PKCE linking flow joins to user_id once its code is exchanged with the verifier';

alter table auth.oauth_states
  add column link_binding_hash bytea;

comment on column auth.oauth_states.link_binding_hash is
  'SHA-256 of the cookie secret a linking flow without PKCE must bring back to the callback';
