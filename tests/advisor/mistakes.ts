// Test support: one deliberate mistake per class `npm run db:lint` detects, each on an object of its
// own and otherwise written as the project writes its schema (RLS enabled and forced, the tenancy
// API in sub-selects, search_path pinned, foreign keys indexed), so each object draws exactly one
// finding: the class it was written to show.

export interface Mistake {
  id: string;
  /** the object the finding names */
  object: string;
  sql: string;
}

export const MISTAKES: Mistake[] = [
  {
    id: 'rls_disabled_in_exposed_schema',
    object: 'public.lint_open_notes',
    sql: `create table public.lint_open_notes (id uuid primary key, body text);
          grant select on public.lint_open_notes to anon, authenticated;`,
  },
  {
    id: 'rls_not_forced',
    object: 'public.lint_own_notes',
    sql: `create table public.lint_own_notes (id uuid primary key, user_id uuid not null, body text);
          alter table public.lint_own_notes enable row level security;
          grant select on public.lint_own_notes to authenticated;
          create policy own_read on public.lint_own_notes for select to authenticated
            using (user_id = (select auth.uid()));`,
  },
  {
    // Membership read straight from workspace_members: current members, but at aal1 too.
    id: 'policy_bypasses_mfa_lock',
    object: 'public.lint_team_notes policy team_read',
    sql: `create table public.lint_team_notes (
            id uuid primary key,
            workspace_id uuid not null references public.workspaces (id) on delete cascade,
            body text);
          create index on public.lint_team_notes (workspace_id);
          alter table public.lint_team_notes enable row level security, force row level security;
          grant select on public.lint_team_notes to authenticated;
          create policy team_read on public.lint_team_notes for select to authenticated
            using (workspace_id in (select m.workspace_id from public.workspace_members m
                                    where m.user_id = (select auth.uid())));`,
  },
  {
    // Only rows of no workspace (workspace_id is null) pass by the lock; rows of one do not.
    id: 'policy_bypasses_mfa_lock',
    object: 'public.lint_own_events policy own_read',
    sql: `create table public.lint_own_events (
            id uuid primary key,
            workspace_id uuid references public.workspaces (id) on delete cascade,
            user_id uuid);
          create index on public.lint_own_events (workspace_id);
          alter table public.lint_own_events enable row level security, force row level security;
          grant select on public.lint_own_events to authenticated;
          create policy own_read on public.lint_own_events for select to authenticated
            using (workspace_id is not null and user_id = (select auth.uid()));`,
  },
  {
    id: 'security_definer_search_path',
    object: 'internal.lint_count_members(ws uuid)',
    sql: `create function internal.lint_count_members(ws uuid) returns bigint
            language sql stable security definer
            as $$ select count(*) from public.workspace_members where workspace_id = ws $$;
          revoke all on function internal.lint_count_members(uuid) from public;`,
  },
  {
    // Functions are executable by PUBLIC unless revoked, so anon may call this one.
    id: 'security_definer_function_anon',
    object: 'public.lint_workspace_count()',
    sql: `create function public.lint_workspace_count() returns bigint
            language sql stable security definer set search_path = ''
            as $$ select count(*) from public.workspaces $$;`,
  },
  {
    id: 'security_definer_view',
    object: 'public.lint_project_names',
    sql: `create view public.lint_project_names as select id, name from public.projects;
          grant select on public.lint_project_names to authenticated;`,
  },
  {
    id: 'materialized_view_in_api',
    object: 'public.lint_project_counts',
    sql: `create materialized view public.lint_project_counts as
            select workspace_id, count(*) as projects from public.projects group by workspace_id;
          grant select on public.lint_project_counts to authenticated;`,
  },
  {
    // auth.uid() bare: evaluated for every row; the first arm shows a wrapped call is not enough.
    id: 'auth_rls_initplan',
    object: 'public.lint_drafts policy drafts_read',
    sql: `create table public.lint_drafts (id uuid primary key, user_id uuid not null, editor_id uuid);
          alter table public.lint_drafts enable row level security, force row level security;
          grant select on public.lint_drafts to authenticated;
          create policy drafts_read on public.lint_drafts for select to authenticated
            using (editor_id = (select auth.uid()) or user_id = auth.uid());`,
  },
  {
    id: 'tenancy_check_per_row',
    object: 'public.lint_tasks policy tasks_read',
    sql: `create table public.lint_tasks (
            id uuid primary key,
            workspace_id uuid not null references public.workspaces (id) on delete cascade,
            title text);
          create index on public.lint_tasks (workspace_id);
          alter table public.lint_tasks enable row level security, force row level security;
          grant select on public.lint_tasks to authenticated;
          create policy tasks_read on public.lint_tasks for select to authenticated
            using (tenantry.is_member(workspace_id));`,
  },
  {
    // In a schema the data API does not expose, so only the missing index is at fault.
    id: 'unindexed_foreign_key',
    object: 'internal.lint_project_log foreign key lint_project_log_project_id_fkey',
    sql: `create table internal.lint_project_log (
            id bigint generated always as identity primary key,
            project_id uuid not null references public.projects (id) on delete cascade,
            note text);`,
  },
];

/** Created after the types are generated: the one table the types file does not know. */
export const UNTYPED: Mistake = {
  id: 'types_missing_table',
  object: 'public.lint_untyped',
  sql: `create table public.lint_untyped (id uuid primary key);
        alter table public.lint_untyped enable row level security, force row level security;`,
};
