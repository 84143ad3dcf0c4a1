-- The transactional outbox: every e-mail (invitations, digests, billing notices) is written here
-- in the same transaction as the change that causes it, then delivered by the mail worker.
create table internal.outbox (
  id bigserial primary key,
  kind text not null,
  -- Optional idempotency key: a second enqueue with the same key is ignored.
  dedupe_key text unique,
  to_address text not null,
  subject text not null,
  text_body text not null,
  html_body text,
  headers jsonb not null default '{}',
  -- Stable across retries, so a receiver can recognise a re-delivery after a crash.
  message_id text not null unique,
  created_at timestamptz not null default now(),
  available_at timestamptz not null default now(),
  -- A worker that claims a message leases it until this time; an expired lease is claimable again.
  leased_until timestamptz,
  attempts integer not null default 0,
  last_error text,
  sent_at timestamptz,
  failed_at timestamptz
);
create index outbox_deliverable_idx on internal.outbox (available_at, id)
  where sent_at is null and failed_at is null;
