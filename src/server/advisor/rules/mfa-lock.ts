// In charge of policies that let a signed-in caller past a workspace's "require two-step
// verification" lock. The tenancy API (tenantry.workspace_ids, role, is_member, has_role; decision
// 0060) honours the lock, the caller's standing and current memberships; a policy that reads
// public.workspace_members itself, or admits rows on another condition, does not.
//
// The rule, on every table that holds workspace rows (public.workspaces, or a table with a
// workspace_id column or a foreign key to public.workspaces) with row-level security on: each
// permissive policy that applies to authenticated must admit rows only through the lock. An
// expression does when each of its OR arms does; an arm that is an AND does when one of its
// conjuncts does; anything else does when it calls a lock-aware function: the tenancy API, or a
// function whose body calls it or reads the session's aal claim. A conjunct `<workspace column> is
// null` passes too: such rows belong to no workspace, so no workspace's lock is passed by (the
// audit log's account events, read by the account they are about). A restrictive policy for the same
// command that calls a lock-aware function guards the table: the exceptions it writes out (an
// invitation to the caller's own address) are deliberate, so its permissive policies are not judged.
import type { Queryable } from '../../db/pool.js';
import { calls, parseExpression, splitAt, textOf, unwrap, type Expression } from '../expression.js';
import { SYSTEM_SCHEMAS_SQL, type Finding, type Rule } from '../finding.js';
import { expressionsOf, policyObject, readPolicies, type Command, type Policy } from '../policies.js';

const TENANCY_API = ['workspace_ids', 'role', 'is_member', 'has_role'];

interface WorkspaceTable {
  object: string;
  /** the column that names the row's workspace, for the fix */
  column: string;
}

async function workspaceTables(db: Queryable): Promise<WorkspaceTable[]> {
  const { rows } = await db.query<WorkspaceTable>(
    `select format('%I.%I', n.nspname, c.relname) as object,
            case when c.oid = to_regclass('public.workspaces') then 'id'
                 when exists (select 1 from pg_catalog.pg_attribute a
                              where a.attrelid = c.oid and a.attname = 'workspace_id' and not a.attisdropped)
                   then 'workspace_id'
                 else (select quote_ident(a.attname) from pg_catalog.pg_constraint k
                       join pg_catalog.pg_attribute a on a.attrelid = k.conrelid and a.attnum = k.conkey[1]
                       where k.conrelid = c.oid and k.contype = 'f' and k.confrelid = to_regclass('public.workspaces')
                       order by k.conname limit 1)
            end as column
     from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
     where c.relkind in ('r', 'p') and c.relrowsecurity and ${SYSTEM_SCHEMAS_SQL}
       and (c.oid = to_regclass('public.workspaces')
            or exists (select 1 from pg_catalog.pg_attribute a
                       where a.attrelid = c.oid and a.attname = 'workspace_id' and a.attnum > 0 and not a.attisdropped)
            or exists (select 1 from pg_catalog.pg_constraint k
                       where k.conrelid = c.oid and k.contype = 'f' and k.confrelid = to_regclass('public.workspaces')))
     order by 1`,
  );
  return rows;
}

/** schema.name of every lock-aware function. */
async function lockAwareFunctions(db: Queryable): Promise<Set<string>> {
  const { rows } = await db.query<{ name: string }>(
    `select distinct n.nspname || '.' || p.proname as name
     from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
     where ${SYSTEM_SCHEMAS_SQL}
       and ((n.nspname = 'tenantry' and p.proname = any ($1::text[]))
            or p.prosrc ~ ('tenantry\\s*\\.\\s*(' || array_to_string($1::text[], '|') || ')\\s*\\(')
            or p.prosrc ~ '->>\\s*''aal''')`,
    [TENANCY_API],
  );
  return new Set(rows.map((row) => row.name));
}

type Verdict = { through: true } | { through: false; arm: string };

/** Whether tokens [from, to) say `<column> is null`: rows of no workspace. */
function noWorkspace(expression: Expression, column: string, from: number, to: number): boolean {
  [from, to] = unwrap(expression, from, to);
  const name = column.replace(/^"|"$/g, '');
  return new RegExp(`^"?${name}"?\\s+is\\s+null$`, 'i').test(textOf(expression, from, to).trim());
}

/** Whether tokens [from, to) admit a row only through the lock; if not, the first arm that does not. */
function throughLock(
  expression: Expression,
  aware: Set<string>,
  column: string,
  from: number,
  to: number,
): Verdict {
  [from, to] = unwrap(expression, from, to);
  const ors = splitAt(expression, from, to, 'or');
  if (ors.length > 1) {
    for (const [a, b] of ors) {
      const verdict = throughLock(expression, aware, column, a, b);
      if (!verdict.through) return verdict;
    }
    return { through: true };
  }
  const ands = splitAt(expression, from, to, 'and');
  if (ands.length > 1) {
    return ands.some(
      ([a, b]) =>
        noWorkspace(expression, column, a, b) || throughLock(expression, aware, column, a, b).through,
    )
      ? { through: true }
      : { through: false, arm: textOf(expression, from, to) };
  }
  return calls(expression, from, to).some((call) => aware.has(`${call.schema}.${call.name}`))
    ? { through: true }
    : { through: false, arm: textOf(expression, from, to) };
}

function mentionsLock(policy: Policy, aware: Set<string>): boolean {
  return expressionsOf(policy).some(({ text }) =>
    calls(parseExpression(text)).some((call) => aware.has(`${call.schema}.${call.name}`)),
  );
}

const COMMANDS: Command[] = ['SELECT', 'INSERT', 'UPDATE', 'DELETE'];

function guarded(guards: Set<Command>, command: Command): boolean {
  if (guards.has('ALL')) return true;
  return command === 'ALL' ? COMMANDS.every((c) => guards.has(c)) : guards.has(command);
}

function why(arm: string): string {
  if (/^true$/i.test(arm)) return 'admits every row (true)';
  const shown = arm.length > 140 ? `${arm.slice(0, 137)}…` : arm;
  if (/\bpublic\.workspace_members\b/.test(arm))
    return `reads public.workspace_members directly (${shown}), which knows nothing of the lock`;
  return `admits rows by ${shown} without the tenancy API`;
}

export const mfaLockBypass: Rule = {
  id: 'policy_bypasses_mfa_lock',
  level: 'ERROR',
  what: 'A permissive policy for authenticated on a table of workspace rows admits rows without the tenancy API (reading public.workspace_members directly, or on any other condition, or true), and no restrictive policy applies the lock: a session without two-step verification reaches workspaces that require it.',
  fix: 'Scope the policy through the tenancy API, e.g. workspace_id = any ((select tenantry.workspace_ids())::uuid[]), or guard the table with a restrictive policy that does.',
  async check(context) {
    const tables = await workspaceTables(context.db);
    if (tables.length === 0) return [];
    const aware = await lockAwareFunctions(context.db);
    const policies = (await readPolicies(context)).filter((policy) => policy.forAuthenticated);
    const findings: Finding[] = [];
    for (const table of tables) {
      const own = policies.filter((policy) => policy.qualifiedTable === table.object);
      const guards = new Set(
        own
          .filter((policy) => !policy.permissive && mentionsLock(policy, aware))
          .map((policy) => policy.command),
      );
      for (const policy of own) {
        if (!policy.permissive || guarded(guards, policy.command)) continue;
        for (const { clause, text } of expressionsOf(policy)) {
          const expression = parseExpression(text);
          const verdict = throughLock(expression, aware, table.column, 0, expression.tokens.length);
          if (verdict.through) continue;
          findings.push({
            id: this.id,
            level: this.level,
            object: policyObject(policy),
            detail: `Policy ${policy.name} on ${table.object} (${clause}) ${why(verdict.arm)}, so a session at aal1 reaches workspaces that require two-step verification.`,
            fix: `Scope it as ${table.column} = any ((select tenantry.workspace_ids())::uuid[]) (with the least role it needs), or guard ${table.object} with a restrictive policy that calls the tenancy API.`,
          });
          break;
        }
      }
    }
    return findings;
  },
};
