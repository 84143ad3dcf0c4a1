-- The payment webhook's event log: every verified event is stored, keyed by the provider's event
-- id, before it is acted on. The key makes duplicate deliveries harmless; the stored payload
-- lets an operator replay events (npm run billing:replay).
create table internal.billing_events (
  id text primary key,
  type text not null,
  -- the provider's creation time (unix seconds): the order in which state changes are applied
  created bigint not null,
  payload jsonb not null,
  status text not null check (status in ('processing', 'processed', 'ignored', 'failed')),
  attempts integer not null default 1,
  last_error text,
  received_at timestamptz not null default now(),
  processed_at timestamptz
);
create index billing_events_failed_idx on internal.billing_events (received_at) where status = 'failed';
