-- The digest ledger: one row per (user, frequency, period) whose digest was enqueued, written in
-- the same statement as the outbox message. Its key makes a digest exactly-once per period, even
-- when runs overlap (two instances) or a killed run is started again.
create table internal.digest_ledger (
  user_id uuid not null references auth.users (id) on delete cascade,
  frequency text not null check (frequency in ('daily', 'weekly')),
  period_start timestamptz not null,
  events integer not null,
  created_at timestamptz not null default now(),
  primary key (user_id, frequency, period_start)
);
-- "when did this user last get a digest of this frequency"
create index digest_ledger_latest_idx on internal.digest_ledger (user_id, frequency, created_at desc);
-- eligibility scans preferences by frequency
create index notification_preferences_frequency_idx on public.notification_preferences (digest_frequency, user_id);
