// In charge of starting a new application migration (`npm run db:new -- <name>`): its file name,
// from the second it is created, and its text, a workspace-scoped table written on the tenancy API
// (decision 0060) for the team to adapt.
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { APP_MIGRATION_NAME } from './migration-files.js';

/** Long enough to say what a migration does; short enough that `<table>_workspace_idx` is a valid identifier. */
const MAX_NAME_LENGTH = 50;

export class MigrationNameError extends Error {
  override name = 'MigrationNameError';
}

/**
 * The name as it goes into the file name: lower case, words joined by `_`. Anything else
 * (quotes, dots, slashes, accents) is refused rather than guessed at.
 */
export function migrationSlug(name: string): string {
  const slug = name
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
  if (!/^[a-z][a-z0-9_]*$/.test(slug) || slug.length > MAX_NAME_LENGTH) {
    throw new MigrationNameError(
      `A migration name is a letter followed by letters, digits, spaces, - or _, at most ${MAX_NAME_LENGTH} characters (got ${JSON.stringify(name)}); for example: create_tasks`,
    );
  }
  return slug;
}

/** YYYYMMDDHHMMSS in UTC, so two people's files order by when they were written wherever they are. */
export function timestampOf(at: Date): string {
  return at.toISOString().replace(/\D/g, '').slice(0, 14);
}

/** The table the template creates: the name without a leading create_ (create_tasks makes tasks). */
export function templateTable(slug: string): string {
  const table = slug.replace(/^create_(?=[a-z])/, '');
  return table;
}

export function appMigrationTemplate(file: string, table: string): string {
  // What one row is called in activity entries: tasks -> task.
  const noun = table.length > 1 && table.endsWith('s') ? table.slice(0, -1) : table;
  return `-- ${file}
-- What this migration does, in a sentence: <say it here>.
--
-- An application migration: it runs once, after every core migration, in a transaction of its
-- own (db/app-migrations/README.md). Once it has run anywhere, never edit it: write a new one.
--
-- Change:
--   * the table's name (public.${table}) and its columns: title is an example;
--   * the roles in the policies: reading takes 'viewer', writing 'member' (or 'admin', 'owner');
--   * the grants: authenticated gets exactly the columns a client sets. Not workspace_id on
--     update (a row stays in its workspace), not created_by or created_at (the database sets them).
-- Keep:
--   * workspace_id referencing public.workspaces on delete cascade, and the index on
--     (workspace_id, created_at desc) that policies and pages read through;
--   * row-level security enabled AND forced;
--   * policies written workspace_id = any ((select tenantry.workspace_ids(<role>))::uuid[]):
--     evaluated once per statement, used as an index condition, and honouring current
--     memberships, a workspace's two-step requirement, bans and sign-outs. Not a sub-query on
--     workspace_members, and not a function called per row.

create table public.${table} (
  id uuid primary key default gen_random_uuid(),
  workspace_id uuid not null references public.workspaces (id) on delete cascade,
  title text not null check (char_length(btrim(title)) between 1 and 200),
  created_by uuid references auth.users (id) on delete set null default auth.uid(),
  created_at timestamptz not null default now()
);
create index ${table}_workspace_idx on public.${table} (workspace_id, created_at desc);
-- Every foreign key gets an index: deleting a user then finds their rows without a scan.
create index ${table}_created_by_idx on public.${table} (created_by);

alter table public.${table} enable row level security;
alter table public.${table} force row level security;

create policy ${table}_read on public.${table} for select to authenticated
  using (workspace_id = any ((select tenantry.workspace_ids('viewer'))::uuid[]));
create policy ${table}_insert on public.${table} for insert to authenticated
  with check (workspace_id = any ((select tenantry.workspace_ids('member'))::uuid[]));
create policy ${table}_update on public.${table} for update to authenticated
  using (workspace_id = any ((select tenantry.workspace_ids('member'))::uuid[]))
  with check (workspace_id = any ((select tenantry.workspace_ids('member'))::uuid[]));
create policy ${table}_delete on public.${table} for delete to authenticated
  using (workspace_id = any ((select tenantry.workspace_ids('member'))::uuid[]));

grant select, delete on public.${table} to authenticated;
grant insert (workspace_id, title), update (title) on public.${table} to authenticated;
grant all on public.${table} to service_role;

-- Optional (remove the -- to use): changes in the workspace's activity feed and digests
-- ("${noun}.created" with the title as subject), and a plan limit on the workspace's rows
-- (FREE_PLAN_LIMITS and "limits" in BILLING_PLANS name it "${table}").
-- create trigger ${table}_activity after insert or update or delete on public.${table}
--   for each row execute function tenantry.record_activity('${noun}', 'title');
-- create trigger ${table}_plan_limit before insert or update or delete on public.${table}
--   for each row execute function tenantry.enforce_plan_limit('${table}');
`;
}

/**
 * Writes the new file into dir (created if missing) and returns its path. A file made in a second
 * that already has one gets the next free second, so even a script creating several keeps them in
 * the order it made them (within one second, names would order them).
 */
export function createAppMigration(dir: string, name: string, now = new Date()): string {
  const slug = migrationSlug(name);
  mkdirSync(dir, { recursive: true });
  const taken = new Set(readdirSync(dir).map((f) => f.slice(0, 14)));
  let at = now.getTime();
  while (taken.has(timestampOf(new Date(at)))) at += 1000;
  const file = `${timestampOf(new Date(at))}_${slug}.sql`;
  if (!APP_MIGRATION_NAME.test(file))
    throw new MigrationNameError(`Not a valid migration file name: ${file}`);
  const full = path.join(dir, file);
  // wx: never overwrite, even if another process wrote the same name in between.
  writeFileSync(full, appMigrationTemplate(file, templateTable(slug)), { flag: 'wx' });
  return full;
}
