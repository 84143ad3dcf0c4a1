-- The operator console (/admin, decision 0096): the accounts the operator marks as staff. Staff is
-- kept here, inside the database, rather than in an environment list: who may open the console is
-- then changed by a command that leaves its line in the audit log, and follows the account (not an
-- address that may later belong to someone else after an e-mail change).
--
-- Only the service's own connection reads it (the console's server code checks staff and the
-- session's second factor on every request and every action); the data API never sees it, and
-- nothing but `npm run operator:staff` writes it.

create table if not exists internal.operator_staff (
  user_id uuid primary key references auth.users (id) on delete cascade,
  granted_at timestamptz not null default now(),
  -- who ran the command (the operating-system user or a note), for the record
  granted_by text not null check (char_length(granted_by) between 1 and 200)
);

comment on table internal.operator_staff is
  'Accounts allowed into the operator console (/admin) once their session has passed a second factor';

revoke all on internal.operator_staff from public, anon, authenticated, service_role;
grant select on internal.operator_staff to service_role;
-- No policy: a request role that somehow reached the table would read nothing (service_role
-- bypasses row-level security, as everywhere else).
alter table internal.operator_staff enable row level security;

-- The console's audit view filters by workspace and by operator lines across every workspace.
create index if not exists audit_events_operator_idx on public.audit_events (created_at desc)
  where details ? 'operator';
