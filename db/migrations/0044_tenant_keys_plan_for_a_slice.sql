-- The planner reads a tenant key as many workspaces, each a small share (decision 0038).
--
-- Policies filter by `workspace_id = any ((select <the caller's workspace ids>)::uuid[])`. The
-- array is only known when the statement runs, so the planner assumes ten elements and judges
-- them by the column's statistics. Where one workspace holds most rows (a young installation,
-- or one large customer), those statistics say a caller sees nearly everything, so the planner
-- scans the whole table and tests each row against the caller's array. That test walks the
-- array element by element: its cost is rows times memberships. A member of 1,177 workspaces
-- asking for the 20 newest of 18,800 projects, all in one of them, waited 154 ms that way,
-- against 6 ms through the workspace index; where that workspace sat in the caller's array
-- decided what the scan cost.
--
-- A fixed n_distinct tells the planner what this schema is for: many workspaces, a caller
-- seeing a few. The planner uses it wherever it has no better figure for one workspace: the
-- policies' arrays, parameters of generic plans, a workspace outside the most common values
-- ANALYZE records, joins and groupings on the column. The most common values still describe the
-- real skew for a constant among them. With it, the policy's array drives the workspace index,
-- so a caller's list costs what that caller can see, however many workspaces the caller is in.
--
-- Only tables whose policy the array can drive through an index on workspace_id: projects, the
-- activity log and members. Invitations have no such index (their partial unique index covers
-- open invitations only, and their policy also admits the invitee by address); columns with one
-- row per workspace (workspaces.id, subscriptions.workspace_id) already have one row per value.

alter table public.projects alter column workspace_id set (n_distinct = 1000);
alter table public.activity_events alter column workspace_id set (n_distinct = 1000);
alter table public.workspace_members alter column workspace_id set (n_distinct = 1000);

-- The setting is read by ANALYZE: apply it now rather than at the next automatic analysis.
analyze public.projects, public.activity_events, public.workspace_members;
