-- One row per scheduled slot: the instance that inserts it runs the job, every other instance
-- sees the conflict and skips, so a job fires once per slot however many instances run.
create table internal.scheduler_runs (
  job text not null,
  slot timestamptz not null,
  instance text not null,
  started_at timestamptz not null default now(),
  finished_at timestamptz,
  result jsonb,
  error text,
  primary key (job, slot)
);
